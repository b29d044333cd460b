package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's examples that claim an effect, run as written (read from the README itself, in virtual time) and
 * checked for the effect they claim, against the same command with the other router where the claim is a comparison.
 */
class ReadmeExamplesTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Path WORKLOADS_README = Path.of("..", "configs", "workloads", "README.md");

    /** The shell command in a fenced block of {@code file} that starts with {@code start}, split into arguments. */
    private static List<String> command(Path file, String start) throws IOException {
        String text = Files.readString(file).replaceAll("\\\\\\n\\s*", " ");
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(start) + ".*$").matcher(text);
        assertTrue(m.find(), file + " shows no command starting with " + start);
        List<String> args = new ArrayList<>(Arrays.asList(m.group().trim().split("\\s+")));
        assertEquals("./infersim", args.remove(0));
        return args;
    }

    private static List<String> with(List<String> args, String flag, String value) {
        List<String> out = new ArrayList<>(args);
        int i = out.indexOf(flag);
        if (i < 0) {
            out.add(flag);
            out.add(value);
        } else {
            out.set(i + 1, value);
        }
        return out;
    }

    private static CliRun run(List<String> args) {
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, r.exitCode(), String.join(" ", args) + "\n" + r.out() + r.err());
        return r;
    }

    private static double printed(CliRun r, String label) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(label) + "\\s+([0-9.]+)").matcher(r.out());
        assertTrue(m.find(), label + " not printed:\n" + r.out());
        return Double.parseDouble(m.group(1));
    }

    /** More prefixes than one replica's KV cache holds: prefix-affinity keeps each on one replica, round-robin thrashes. */
    @Test
    void prefixAffinityBeatsRoundRobinWhenThePrefixesOutgrowOneReplicasCache() throws IOException {
        List<String> example = command(README, "./infersim simulate --replicas 4 --router prefix-affinity");
        CliRun affinity = run(example);
        CliRun roundRobin = run(with(example, "--router", "round-robin"));
        assertTrue(printed(affinity, "Mean TTFT (ms):") < 0.7 * printed(roundRobin, "Mean TTFT (ms):"),
                affinity.out() + roundRobin.out());
        assertTrue(printed(affinity, "Median TTFT (ms):") < 0.5 * printed(roundRobin, "Median TTFT (ms):"));
        assertTrue(printed(affinity, "Prefix cache hit rate:") > printed(roundRobin, "Prefix cache hit rate:") + 0.2);
    }

    @Test
    void loraAffinityKeepsAdaptersOnFewReplicasAndCutsTtft() throws IOException {
        List<String> example = command(README, "./infersim simulate --workload lora-tenants");
        CliRun affinity = run(example);
        CliRun roundRobin = run(with(example, "--router", "round-robin"));
        assertTrue(printed(affinity, "Mean TTFT (ms):") < 0.5 * printed(roundRobin, "Mean TTFT (ms):"),
                affinity.out() + roundRobin.out());
        assertTrue(printed(affinity, "Median TTFT (ms):") < 0.5 * printed(roundRobin, "Median TTFT (ms):"));
    }

    /**
     * The burst profile: nothing scales before the burst (120 s); during it one replica falls seconds behind, the HPA
     * scales up, and once the new replicas are ready TTFT is back to tens of milliseconds.
     */
    @Test
    void theHpaScalesUpOnTheBurstAndTtftRecoversOnceTheReplicasAreReady(@TempDir Path dir) throws IOException {
        List<String> example = command(README, "./infersim simulate --workload burst");
        run(with(with(example, "--result-dir", dir.toString()), "--result-filename", "burst.json"));
        JsonNode result = new ObjectMapper().readTree(dir.resolve("burst.json").toFile());
        JsonNode replicas = result.get("infersim_replicas");
        double firstScaleUp = Double.NaN;
        double lastReady = 0;
        int peak = 1;
        for (int i = 0; i < replicas.get("time_s").size(); i++) {
            double t = replicas.get("time_s").get(i).asDouble();
            int desired = replicas.get("desired").get(i).asInt();
            if (desired > 1 && Double.isNaN(firstScaleUp)) {
                firstScaleUp = t;
            }
            if (replicas.get("ready").get(i).asInt() > 1) {
                lastReady = Math.max(lastReady, t);
            }
            peak = Math.max(peak, desired);
        }
        assertTrue(firstScaleUp >= 120 && firstScaleUp < 240, "scaled up during the burst: " + replicas);
        assertTrue(peak >= 4, "to several replicas: " + replicas);
        JsonNode lot = result.get("infersim_latency_over_time");
        double worst = 0;
        double after = 0;
        int afterBuckets = 0;
        for (int i = 0; i < lot.get("time_s").size(); i++) {
            double t = lot.get("time_s").get(i).asDouble();
            JsonNode mean = lot.get("mean_ttft_ms").get(i);
            if (mean.isNull()) {
                continue;
            }
            if (t >= 120 && t < lastReady) {
                worst = Math.max(worst, mean.asDouble());
            } else if (t >= lastReady + 5 && t < 240) {
                after += mean.asDouble();
                afterBuckets++;
            }
        }
        assertTrue(worst > 1_000, "one replica fell seconds behind: " + worst);
        assertTrue(afterBuckets > 10 && after / afterBuckets < 100, "recovered: " + after / afterBuckets + " ms");
    }

    /** The LoRA snippet of the workload README is a profile that runs. */
    @Test
    void theLoraSnippetIsAProfileThatRuns(@TempDir Path dir) throws IOException {
        String text = Files.readString(WORKLOADS_README);
        int at = text.indexOf("## LoRA adapters");
        int start = text.indexOf("```yaml", at) + "```yaml".length();
        Path profile = dir.resolve("tenants.yaml");
        Files.writeString(profile, text.substring(start, text.indexOf("```", start)));
        CliRun r = run(List.of("simulate", "--workload", profile.toString(), "--dataset-name", "workload",
                "--enable-lora", "--num-prompts", "20", "--request-rate", "5"));
        assertTrue(r.out().contains("Successful requests:"), r.out());
    }
}
