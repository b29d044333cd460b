package dev.infersim.bench.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.harness.HarnessCheck.Report;
import dev.infersim.bench.harness.HarnessResults.Format;
import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The generic per-request format: the corpus's healthy vllm bench serve run, written out in it, is read back as the
 * same requests and judged alike whatever unit the file declares; a unit declared wrong is named; bad files are one
 * line naming the line and why.
 */
class GenericFormatTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static HarnessResults.Results vllmRun() throws Exception {
        return HarnessResults.read(Format.VLLM, HarnessCheckTest.resource("corpus/vllm-healthy/result.json.gz"));
    }

    /** The vllm run's requests as generic lines, times in {@code unit} ({@code perMs} units a millisecond). */
    private Path write(HarnessResults.Results run, List<String> texts, String unit, double perMs) throws Exception {
        List<String> lines = new ArrayList<>();
        lines.add("{\"format\": \"infersim-harness/1\", \"time_unit\": \"" + unit + "\", \"clock\": \"relative\", "
                + "\"target\": {\"request_rate\": 10, \"process\": \"poisson\"}}");
        for (int i = 0; i < run.requests().size(); i++) {
            Measured m = run.requests().get(i);
            ObjectNode n = JSON.createObjectNode();
            n.put("ttft", m.ttftMs() * perMs);
            n.put("e2el", m.e2elMs() * perMs);
            ArrayNode itl = n.putArray("itl");
            for (double v : m.itlsMs()) {
                itl.add(v * perMs);
            }
            n.put("prompt_tokens", m.promptTokens());
            n.put("output_tokens", m.outputTokens());
            n.put("text", texts.get(i));
            lines.add(JSON.writeValueAsString(n));
        }
        lines.add("{\"ttft\": 1, \"e2el\": 2, \"error\": \"timeout\"}");
        Path file = dir.resolve(unit + ".jsonl");
        Files.write(file, lines);
        return file;
    }

    private static List<String> texts() throws Exception {
        List<String> texts = new ArrayList<>();
        JSON.readTree(new java.util.zip.GZIPInputStream(Files.newInputStream(
                HarnessCheckTest.resource("corpus/vllm-healthy/result.json.gz")))).path("generated_texts")
                .forEach(t -> texts.add(t.asText()));
        return texts;
    }

    @Test
    void aRunWrittenInTheGenericFormatIsJudgedAsItsOwnFormatIsWhateverTheDeclaredUnit() throws Exception {
        HarnessResults.Results run = vllmRun();
        List<TruthTimeline.Row> truth = TruthTimeline.read(HarnessCheckTest.resource("corpus/vllm-healthy/truth.jsonl.gz"));
        Report own = HarnessCheck.check(run, truth, run.target());
        for (String unit : List.of("s", "ms", "us")) {
            double perMs = switch (unit) {
                case "s" -> 1e-3;
                case "ms" -> 1;
                default -> 1e3;
            };
            HarnessResults.Results generic = HarnessResults.read(Format.GENERIC, write(run, texts(), unit, perMs));
            assertEquals(200, generic.requests().size());
            assertEquals(1, generic.failed());
            assertEquals(new HarnessTarget(10, HarnessTarget.Process.POISSON, 1, 0, 0), generic.target());
            Report r = HarnessCheck.check(generic, truth, generic.target());
            assertEquals(200, r.matching().byText(), unit);
            assertEquals(HarnessCheck.Verdict.CLEAN, r.verdict(), unit);
            assertEquals(own.errors().get("ttft_ms").p50(), r.errors().get("ttft_ms").p50(), 1e-6, unit);
            assertEquals(own.errors().get("itl_mean_ms").p99(), r.errors().get("itl_mean_ms").p99(), 1e-6, unit);
        }
    }

    @Test
    void millisecondsDeclaredAsSecondsAreNamedAndJudgedAtTheRightUnit() throws Exception {
        HarnessResults.Results run = vllmRun();
        List<TruthTimeline.Row> truth = TruthTimeline.read(HarnessCheckTest.resource("corpus/vllm-healthy/truth.jsonl.gz"));
        HarnessResults.Results wrong = HarnessResults.read(Format.GENERIC, write(run, texts(), "s", 1));
        Report r = HarnessCheck.check(wrong, truth, wrong.target());
        assertEquals(List.of("time_units"), r.findings().stream().map(HarnessFinding::id).toList());
        assertEquals(1e-3, r.findings().get(0).evidence().get("factor_applied"));
        assertEquals(HarnessCheck.Verdict.FINDINGS, r.verdict());
        Report own = HarnessCheck.check(run, truth, run.target());
        assertEquals(own.errors().get("ttft_ms").p50(), r.errors().get("ttft_ms").p50(), 1e-6);
    }

    @Test
    void aFileWithoutItsHeaderOrWithAnUnknownUnitIsOneLineNamingIt() throws Exception {
        Path noHeader = dir.resolve("a.jsonl");
        Files.writeString(noHeader, "{\"ttft\": 1, \"e2el\": 2}\n");
        ConfigException e = assertThrows(ConfigException.class, () -> HarnessResults.read(Format.GENERIC, noHeader));
        assertTrue(e.getMessage().contains("line 1 is not the header of infersim-harness/1"), e.getMessage());
        Path unit = dir.resolve("b.jsonl");
        Files.writeString(unit, "{\"format\": \"infersim-harness/1\", \"time_unit\": \"fortnight\"}\n");
        e = assertThrows(ConfigException.class, () -> HarnessResults.read(Format.GENERIC, unit));
        assertTrue(e.getMessage().contains("time_unit has unit 'fortnight' (s, ms, us or ns expected)"), e.getMessage());
        Path times = dir.resolve("c.jsonl");
        Files.writeString(times, "{\"format\": \"infersim-harness/1\", \"time_unit\": \"ms\"}\n{\"start\": 5}\n");
        e = assertThrows(ConfigException.class, () -> HarnessResults.read(Format.GENERIC, times));
        assertTrue(e.getMessage().contains("line 2: a request needs start, first_token and end, or ttft and e2el"),
                e.getMessage());
    }
}
