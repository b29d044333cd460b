package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every command in every README and guide runs ({@link ReadmeCommands} finds them, {@link ReadmeSession} runs them, with
 * the few changes a test must make, listed there); every command named in backticks exists; the help lists every
 * bundled profile a document names. The examples that claim an effect are also run as written (read from the README
 * itself, in virtual time) and checked for the effect they claim, against the same command with the other router where
 * the claim is a comparison.
 */
class ReadmeExamplesTest {
    @RegisterExtension
    static final InProcessMock MOCK = new InProcessMock();
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final List<ReadmeSession> SESSIONS = new ArrayList<>();

    /**
     * Each document's blocks in order, as one shell session per document (its variables and files carry from block to
     * block); first the files its examples read that none of them writes: results to compare and merge, a trace, a
     * harness's result with the server's truth, step tables to calibrate from.
     */
    @TestFactory
    @Tag("wallclock") // servers, benches and sweeps in real time, the demo three times: 13 min at load 20-30 on 2 cores
    Stream<DynamicContainer> everyCommandInEveryReadmeAndGuideRuns(@TempDir Path dir) {
        return ReadmeCommands.documents(REPO).stream().filter(doc -> !ReadmeCommands.blocks(doc).isEmpty()).map(doc -> {
            Path docDir = dir.resolve(REPO.relativize(doc).toString().replace('/', '_'));
            ReadmeSession[] session = {null};
            List<DynamicTest> tests = new ArrayList<>();
            tests.add(DynamicTest.dynamicTest("files no example writes", () -> {
                Files.createDirectories(docDir);
                try (Stream<Path> files = Files.list(fixtures(dir.resolve("fixtures")))) {
                    for (Path f : files.toList()) {
                        Files.copy(f, docDir.resolve(f.getFileName()), REPLACE_EXISTING);
                    }
                }
                session[0] = new ReadmeSession(REPO, docDir, MOCK.server().port());
                SESSIONS.add(session[0]);
            }));
            for (ReadmeCommands.Block b : ReadmeCommands.blocks(doc)) {
                tests.add(DynamicTest.dynamicTest(REPO.relativize(b.file()) + ":" + b.line(), () -> {
                    try {
                        session[0].run(b);
                    } catch (AssertionError | Exception e) {
                        throw new AssertionError(e.getMessage() + "\nran: " + String.join("\n  ", session[0].transcript), e);
                    }
                }));
            }
            return DynamicContainer.dynamicContainer(REPO.relativize(doc).toString(), tests);
        });
    }

    @AfterAll
    static void stopEveryServer() throws Exception {
        for (ReadmeSession s : SESSIONS) {
            s.close();
        }
    }

    private static Path fixtures;

    /** What the examples read and no example writes, made the way a reader would have made them, once. */
    private static synchronized Path fixtures(Path dir) throws Exception {
        if (fixtures != null) {
            return fixtures;
        }
        Files.createDirectories(dir);
        // two runs to compare, each with its per-request rows
        for (String[] run : new String[][] {{"a.json", "10"}, {"b.json", "14"}}) {
            run(List.of("simulate", "--num-prompts", "200", "--request-rate", run[1], "--seed", "1", "--save-result",
                    "--save-detailed", "--result-dir", dir.toString(), "--result-filename", run[0]));
        }
        // a trace of the documented format
        StringBuilder trace = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            trace.append(String.format("{\"timestamp_ms\": %d, \"input_len\": %d, \"output_len\": %d}%n", 200 * i,
                    300 + 10 * i, 20 + i));
        }
        Files.writeString(dir.resolve("trace.jsonl"), trace);
        // step tables, as the calibration kit writes them
        Path m = REPO.resolve("configs/measurements");
        Files.copy(m.resolve("h100.csv"), dir.resolve("my-steps.csv"), REPLACE_EXISTING);
        Files.copy(m.resolve("h100.csv"), dir.resolve("my-gpu.csv"), REPLACE_EXISTING);
        Files.copy(m.resolve("h100x2-allreduce.csv"), dir.resolve("my-allreduce.csv"), REPLACE_EXISTING);
        Files.copy(m.resolve("h100-codellama-mixtral-tp2-shard.csv"), dir.resolve("my-tp2.csv"),
                REPLACE_EXISTING);
        // a workload of the reader's own
        Files.copy(REPO.resolve("configs/workloads/chat.yaml"), dir.resolve("my-load.yaml"), REPLACE_EXISTING);
        // a harness's result (this project's bench writes vLLM's format) with the truth of the server it ran against
        Path truth = dir.resolve("truth.jsonl");
        dev.infersim.server.observe.TruthLog log = dev.infersim.server.observe.TruthLog.open(truth, 1 << 20);
        dev.infersim.server.fleet.MockServer server = dev.infersim.server.fleet.MockServer.start(dev.infersim.server.config.ServerOptions
                .builder(dev.infersim.engine.Deployment.builder(dev.infersim.engine.Profiles.gpu("h100"),
                        dev.infersim.engine.Profiles.model("llama-3.1-8b")).build()).port(0).timeScale(10)
                .truthLog(log).build()).toCompletionStage().toCompletableFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
        try {
            CliRun r = CliRun.of("bench", "--base-url", server.baseUrl(), "--model", "llama-3.1-8b", "--request-rate",
                    "20", "--num-prompts", "40", "--random-input-len", "64", "--random-output-len", "8", "--save-result",
                    "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "vllm.json");
            assertTrue(r.exitCode() == 0 || r.exitCode() == ExitCodes.INVALID_RUN, r.out() + r.err());
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
            log.close();
        }
        // a sharded run to merge: two shards of one bench against the test's mock, started together; a shard that sets
        // up past the start refuses to run (exit 2), and on a busy machine the two are started again further ahead
        for (long lead = 3_000; ; lead *= 2) {
            String start = String.valueOf(System.currentTimeMillis() + lead);
            List<java.util.concurrent.CompletableFuture<Integer>> shards = new ArrayList<>();
            for (int k = 0; k < 2; k++) {
                List<String> shard = List.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", "llama-3.1-8b",
                        "--request-rate", "20", "--num-prompts", "40", "--random-input-len", "64", "--random-output-len",
                        "8", "--seed", "7", "--shard", k + "/2", "--start-at", start, "--save-result", "--result-dir",
                        dir.toString(), "--result-filename", "s" + k + ".json");
                shards.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> Main.run(shard.toArray(String[]::new))));
            }
            List<Integer> codes = new ArrayList<>();
            for (var f : shards) {
                codes.add(f.get(300, java.util.concurrent.TimeUnit.SECONDS));
            }
            if (codes.stream().allMatch(c -> c == 0 || c == ExitCodes.INVALID_RUN)) {
                break;
            }
            assertTrue(lead < 60_000, "the shards exited " + codes + " with their start " + lead + " ms ahead");
        }
        fixtures = dir;
        return dir;
    }

    /** Every command named in backticks exists. */
    @Test
    void everyCommandNamedInTheDocumentsExists() {
        var commands = new picocli.CommandLine(new Main()).getSubcommands().keySet();
        for (Path doc : ReadmeCommands.documents(REPO)) {
            for (String named : ReadmeCommands.mentions(doc)) {
                assertTrue(commands.contains(named), doc + " names ./infersim " + named);
            }
        }
    }

    /**
     * Every bundled profile a document names with {@code --gpu}, {@code --model} or {@code --workload} is in the
     * registry, and the help lists every one of the registry's, each whole on one line.
     */
    @Test
    void theHelpListsEveryBundledProfileTheDocumentsUse() throws IOException {
        String help = CliRun.of("simulate", "--help").out();
        Pattern flag = Pattern.compile("--(gpu|model|workload)[ =]([a-z0-9][a-z0-9.-]*)(?=[\\s`,)]|$)");
        for (Path doc : ReadmeCommands.documents(REPO)) {
            Matcher m = flag.matcher(Files.readString(doc));
            while (m.find()) {
                String name = m.group(2);
                if (name.endsWith(".yaml")) {
                    continue; // a file of the reader's own
                }
                List<String> bundled = switch (m.group(1)) {
                    case "gpu" -> dev.infersim.engine.Profiles.BUNDLED_GPUS;
                    case "model" -> dev.infersim.engine.Profiles.BUNDLED_MODELS;
                    default -> dev.infersim.workload.WorkloadProfiles.BUNDLED;
                };
                assertTrue(bundled.contains(name), doc + " names --" + m.group(1) + " " + name + ", not bundled");
            }
        }
        for (List<String> registry : List.of(dev.infersim.engine.Profiles.BUNDLED_GPUS,
                dev.infersim.engine.Profiles.BUNDLED_MODELS, dev.infersim.workload.WorkloadProfiles.BUNDLED)) {
            for (String name : registry) {
                assertTrue(Pattern.compile("(?m)[\\s,]" + Pattern.quote(name) + "(,|$)").matcher(help).find(),
                        "simulate --help lists " + name + " whole on one line:\n" + help);
            }
        }
    }
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
