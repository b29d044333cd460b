package dev.infersim.cli;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs the commands of one document's blocks ({@link ReadmeCommands}) as a reader would in a shell, with only what a
 * test must change, each change listed here:
 * <ul>
 *   <li>every port a command names (a server's {@code --port}, a URL, a ZMQ endpoint, a {@code *_PORT} variable) is
 *   a free one, the same for the same port throughout the document; a URL of a port nobody here served is the test's
 *   own mock;</li>
 *   <li>a relative file name is in the session's directory, and a result written by default into the current one
 *   ({@code --save-result}, the demo's page) is sent there too; {@code configs/...} and {@code $M} are the
 *   repository's;</li>
 *   <li>{@code serve} runs as its own process (started with the JVM options {@code ./infersim} gives it, or the
 *   {@code INFERSIM_JAVA_OPTS} the command sets, plus C1-only compilation and the serial GC for a quick start, and
 *   the environment it sets) until its block ends, each block's
 *   commands after it run against it;</li>
 *   <li>long runs are cut short: {@code bench} sends at most 40 requests, {@code sweep} at most 2 s per load,
 *   {@code autoscale} runs 3 s, the demo sweeps two rates of 2 model seconds at 2x (DemoCommandTest runs it in full);
 *   two {@code --shard} benches of one block run together, their {@code $START} 3 s ahead (further on a busy
 *   machine);</li>
 *   <li>{@code ...} in a bench command stands for the flags of a minimal run; an option in brackets is given;
 *   {@code vllm bench serve} is this project's {@code bench}, which takes its flags and writes its result format;</li>
 *   <li>{@code curl} is an HTTP request of the same method, headers and body (its pipe dropped), answered 2xx, or 4xx
 *   where the document shows the error it answers.</li>
 * </ul>
 */
final class ReadmeSession implements AutoCloseable {
    /** How far ahead two shards start: enough to set up on a quiet machine; doubled and retried on a busy one. */
    private static final long SHARD_LEAD_MS = 3_000;
    /**
     * A served JVM's options besides the document's: C1 only and the serial GC, so that the many short-lived servers of
     * the examples start in a fraction of the CPU time a tiered, parallel JVM spends.
     */
    private static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
    private static final Pattern HOST_PORT = Pattern.compile("(127\\.0\\.0\\.1|localhost|\\*):(\\d{4,5})");
    private static final Pattern RELATIVE_FILE = Pattern.compile("[\\w.-]+\\.(json|jsonl|yaml|yml|html|csv|hlog|txt|gz)");
    private static final String MINIMAL_BENCH = "--base-url http://127.0.0.1:8000 --model llama-3.1-8b --request-rate 20 "
            + "--num-prompts 40 --random-input-len 64 --random-output-len 16";

    private final Path repo;
    private final Path dir;
    private final int mockPort;
    private final Map<Integer, Integer> ports = new HashMap<>();
    private final Map<String, String> vars = new LinkedHashMap<>();
    private final Map<Integer, Process> servers = new HashMap<>();
    /** Whether the command being run is a server no later command of its block reaches ({@link #usedLater}). */
    private boolean scratch;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    /** What ran, one line per command, for the failure message. */
    final List<String> transcript = java.util.Collections.synchronizedList(new ArrayList<>());

    ReadmeSession(Path repo, Path dir, int mockPort) {
        this.repo = repo;
        this.dir = dir;
        this.mockPort = mockPort;
    }

    /** Runs a block's commands in order; its servers stop when it ends. */
    void run(ReadmeCommands.Block block) throws Exception {
        try {
            List<ReadmeCommands.Command> together = new ArrayList<>();
            List<ReadmeCommands.Command> commands = block.commands();
            for (int k = 0; k < commands.size(); k++) {
                ReadmeCommands.Command c = commands.get(k);
                scratch = c.text().contains("./infersim serve") && !usedLater(c, commands.subList(k + 1, commands.size()));
                if (c.text().contains("--shard ") && c.text().contains("--start-at")) {
                    together.add(c);
                    continue;
                }
                shards(together);
                together.clear();
                command(expand(c.text()), c);
            }
            shards(together);
        } finally {
            stopServers();
        }
    }

    /**
     * Shards of one run, started together at {@code $START}; a shard that sets up past it refuses (exit 2), and on a
     * busy machine the shards start again with {@code $START} further ahead.
     */
    private void shards(List<ReadmeCommands.Command> shards) throws Exception {
        for (long lead = SHARD_LEAD_MS; !shards.isEmpty(); lead *= 2) {
            vars.put("START", String.valueOf(System.currentTimeMillis() + lead));
            List<CompletableFuture<Integer>> running = new ArrayList<>();
            for (ReadmeCommands.Command c : shards) {
                String text = expand(c.text());
                running.add(CompletableFuture.supplyAsync(() -> infersim(text, c, true)));
            }
            List<Integer> codes = new ArrayList<>();
            for (CompletableFuture<Integer> f : running) {
                codes.add(f.get(300, TimeUnit.SECONDS));
            }
            if (codes.stream().allMatch(code -> code == 0 || code == ExitCodes.INVALID_RUN)) {
                return;
            }
            assertTrue(lead < 60_000, "the shards exited " + codes + " with their start " + lead + " ms ahead");
        }
    }

    private void command(String text, ReadmeCommands.Command c) throws Exception {
        Matcher assignment = Pattern.compile("^([A-Z]+)=(\\$\\(\\(.*\\)\\)|\"[^\"]*\"|'[^']*'|\\S+)$").matcher(text);
        if (assignment.matches()) {
            // START=$(( $(date +%s%3N) + 30000 )): the shards' common start, set again when they run
            String value = assignment.group(2).replaceAll("^[\"']|[\"']$", "");
            vars.put(assignment.group(1), value.startsWith("$((") ? String.valueOf(System.currentTimeMillis() + SHARD_LEAD_MS)
                    : Files.exists(repo.resolve(value)) ? repo.resolve(value).toString() : value);
            transcript.add(text);
        } else if (text.startsWith("for ")) {
            Matcher loop = Pattern.compile("^for (\\w+) in ([^;]+); do (.*); done$", Pattern.DOTALL).matcher(text);
            assertTrue(loop.matches(), "a loop of one command: " + text);
            for (String value : loop.group(2).trim().split("\\s+")) {
                command(loop.group(3).replace("$" + loop.group(1), value), c);
            }
        } else if (text.startsWith("cat > ")) {
            String name = text.substring("cat > ".length(), text.indexOf(' ', "cat > ".length()));
            Files.writeString(dir.resolve(name), text.substring(text.indexOf('\n') + 1) + "\n");
            transcript.add("cat > " + name);
        } else if (text.startsWith("curl ")) {
            curl(text, c);
        } else {
            infersim(text.replaceFirst("^((?:[A-Z_]+=\\S+ +)*)vllm bench serve ", "$1./infersim bench "), c, false);
        }
    }

    /**
     * Whether a later command of the block reaches the server {@code serve} starts (its port named in a URL): then what
     * the server writes (a truth log) is what they read; else it is an example of its own, whose files go aside, so
     * that it cannot empty one another example reads.
     */
    private static boolean usedLater(ReadmeCommands.Command serve, List<ReadmeCommands.Command> later) {
        Matcher m = Pattern.compile("--port (\\d+)").matcher(serve.text());
        String port = m.find() ? m.group(1) : "8000";
        return later.stream().anyMatch(c -> c.text().contains(":" + port));
    }

    /** $NAME and ${NAME} of the document's own variables. */
    private String expand(String text) {
        for (Map.Entry<String, String> v : vars.entrySet()) {
            text = text.replaceAll("\\$(\\{" + v.getKey() + "\\}|" + v.getKey() + "(?![A-Za-z0-9_]))",
                    Matcher.quoteReplacement(v.getValue()));
        }
        return text;
    }

    /**
     * @param together run beside others (shards): through {@link Main#run}, which prints as it goes, and the exit code
     *                 returned to the caller
     */
    private int infersim(String text, ReadmeCommands.Command c, boolean together) {
        List<String> words = ReadmeCommands.words(text.replace("[", "").replace("]", ""));
        Map<String, String> env = new LinkedHashMap<>();
        while (words.get(0).matches("[A-Z_]+=.*")) {
            String[] kv = words.remove(0).split("=", 2);
            env.put(kv[0], kv[0].endsWith("_PORT") ? String.valueOf(port(Integer.parseInt(kv[1]), 1)) : kv[1]);
        }
        assertEquals("./infersim", words.remove(0), text);
        List<String> args = rewrite(words);
        transcript.add(String.join(" ", args));
        if (args.get(0).equals("serve")) {
            serve(args, env, c);
            return 0;
        }
        if (together) {
            return Main.run(args.toArray(String[]::new));
        }
        CliRun run = CliRun.of(args.toArray(String[]::new));
        // a busy machine may flag a measured run invalid (exit 3), and check-harness name what the machine did to the
        // session's own harness run (findings, exit 3): the example ran as written; inconclusive (4) would not
        boolean judged = List.of("bench", "sweep", "merge").contains(args.get(0));
        boolean harness = args.get(0).equals("check-harness");
        assertTrue(run.exitCode() == 0 || judged && run.exitCode() == ExitCodes.INVALID_RUN
                        || harness && run.exitCode() == ExitCodes.HARNESS_FINDINGS,
                "line " + c.line() + ": " + String.join(" ", args) + " exited " + run.exitCode() + "\n" + run.out()
                        + run.err());
        return run.exitCode();
    }

    /** The arguments with this session's ports, files and bounds (see the class comment). */
    private List<String> rewrite(List<String> words) {
        String command = words.get(0);
        List<String> args = new ArrayList<>();
        int replicas = 1;
        for (int i = 0; i < words.size(); i++) {
            if (words.get(i).equals("--replicas") && i + 1 < words.size()) {
                replicas = Integer.parseInt(words.get(i + 1));
            }
        }
        if (words.contains("--router")) {
            replicas += 9; // a front door on the port, its replicas after it, and room for an autoscaler to add 8
        }
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            if (w.equals("...")) {
                if (command.equals("bench")) {
                    args.addAll(List.of(rewriteUrls(MINIMAL_BENCH).split(" ")));
                }
                continue;
            }
            if (w.equals("--port") && i + 1 < words.size()) {
                args.add(w);
                int p = Integer.parseInt(words.get(++i));
                args.add(String.valueOf(command.equals("serve") ? freshPorts(p, replicas) : port(p, replicas)));
                continue;
            }
            w = rewriteUrls(w);
            if (RELATIVE_FILE.matcher(w).matches()) {
                w = (scratch ? dir.resolve("aside") : dir).resolve(w).toString();
            } else if (w.startsWith("configs/")) {
                w = repo.resolve(w).toString();
            }
            args.add(w);
        }
        if (command.equals("serve") && !args.contains("--port")) {
            args.addAll(List.of("--port", String.valueOf(freshPorts(8000, replicas)))); // serve's default port
        }
        switch (command) {
            case "bench" -> cap(args, "--num-prompts", 40);
            case "sweep" -> cap(args, "--duration", 2);
            case "autoscale" -> cap(args, "--duration", 3);
            case "demo" -> {
                for (String[] f : new String[][] {{"--loads", "0.5,1.6"}, {"--run-seconds", "2"}, {"--replications", "2"},
                        {"--max-extra-runs", "0"}, {"--time-scale", "2"}, {"--num-warmups", "5"}}) {
                    set(args, f[0], f[1]);
                }
                if (!args.contains("--html")) {
                    set(args, "--html", dir.resolve("infersim-demo.html").toString());
                }
            }
            default -> { }
        }
        if (args.contains("--save-result") && !args.contains("--result-dir")) {
            args.addAll(List.of("--result-dir", dir.toString()));
        }
        return args;
    }

    private String rewriteUrls(String w) {
        Matcher m = HOST_PORT.matcher(w);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            int p = Integer.parseInt(m.group(2));
            int mapped = m.group(1).equals("*") ? port(p, 1) : ports.getOrDefault(p, mockPort);
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + ":" + mapped));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The free port standing for the document's {@code p}, with {@code count - 1} free ones after it. */
    private int port(int p, int count) {
        Integer known = ports.get(p);
        if (known != null) {
            return known;
        }
        for (int attempt = 0; attempt < 200; attempt++) {
            // below Linux's ephemeral range (32768-60999 by default), where any process's outgoing connection may
            // take a port between this check and the server's bind (a CI run lost 36366 that way)
            int base = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            if (ports.containsValue(base) || !free(base, count)) {
                continue;
            }
            for (int k = 0; k < count; k++) {
                ports.put(p + k, base + k);
            }
            return base;
        }
        throw new IllegalStateException("no " + count + " free ports in a row");
    }

    /** New free ports for a server the document starts on {@code p} (and the {@code count - 1} after it). */
    private int freshPorts(int p, int count) {
        for (int k = 0; k < count; k++) {
            ports.remove(p + k);
        }
        return port(p, count);
    }

    private static boolean free(int base, int count) {
        for (int k = 0; k < count; k++) {
            try (ServerSocket s = new ServerSocket(base + k)) {
                s.setReuseAddress(true);
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    private static void cap(List<String> args, String flag, double most) {
        int i = args.indexOf(flag);
        if (i < 0) {
            args.addAll(List.of(flag, String.valueOf((long) most)));
        } else if (Double.parseDouble(args.get(i + 1)) > most) {
            args.set(i + 1, String.valueOf((long) most));
        }
    }

    private static void set(List<String> args, String flag, String value) {
        int i = args.indexOf(flag);
        if (i < 0) {
            args.addAll(List.of(flag, value));
        } else {
            args.set(i + 1, value);
        }
    }

    /**
     * {@code serve} as its own process, as {@code ./infersim} starts it, until the block ends; ready once its first
     * port answers {@code /v1/models}. A {@code --realtime-engine} the machine refuses ends with the one line that
     * says why, as the document promises.
     */
    private void serve(List<String> args, Map<String, String> env, ReadmeCommands.Command c) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        String opts = env.getOrDefault("INFERSIM_JAVA_OPTS", "-Xms64m -Xmx512m");
        cmd.addAll(List.of(opts.trim().split("\\s+")));
        cmd.addAll(QUICK_START);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(args);
        try {
            Files.createDirectories(dir.resolve("aside"));
            Path log = Files.createTempFile(dir, "serve-", ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                    .directory(dir.toFile());
            pb.environment().putAll(env);
            int port = Integer.parseInt(args.get(args.indexOf("--port") + 1));
            Process before = servers.remove(port);
            if (before != null) { // an earlier example on the same port: a reader stops it first
                stop(before);
            }
            Process p = pb.start();
            servers.put(port, p);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    String out = Files.readString(log);
                    if (args.contains("--realtime-engine") && out.contains("SCHED_FIFO")) {
                        return; // refused on this machine, in one line that says why
                    }
                    fail("line " + c.line() + ": serve exited " + p.exitValue() + "\n" + out);
                }
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                            + "/v1/models")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        return;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                Thread.sleep(200);
            }
            fail("line " + c.line() + ": serve did not answer /v1/models within 90 s\n" + Files.readString(log));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void curl(String text, ReadmeCommands.Command c) throws Exception {
        String request = text.split(" \\| ")[0];
        List<String> words = ReadmeCommands.words(rewriteUrls(request));
        String method = null;
        String body = null;
        String url = null;
        HttpRequest.Builder b = HttpRequest.newBuilder().timeout(Duration.ofSeconds(60));
        for (int i = 1; i < words.size(); i++) {
            switch (words.get(i)) {
                case "-s", "-S", "-sS" -> { }
                case "-X" -> method = words.get(++i);
                case "-H" -> {
                    String[] h = words.get(++i).split(":\\s*", 2);
                    b.header(h[0], h[1]);
                }
                case "-d", "--data" -> body = words.get(++i);
                default -> url = words.get(i).startsWith("http") ? words.get(i) : "http://" + words.get(i);
            }
        }
        method = method != null ? method : body != null ? "POST" : "GET";
        b.uri(URI.create(url)).method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        transcript.add(method + " " + url + " -> " + r.statusCode());
        boolean shownError = c.output().contains("\"error\"");
        assertTrue(shownError ? r.statusCode() >= 400 && r.statusCode() < 500 : r.statusCode() / 100 == 2,
                "line " + c.line() + ": " + text + " answered " + r.statusCode() + ": " + r.body());
    }

    private void stopServers() throws InterruptedException {
        for (Process p : servers.values()) {
            p.destroy();
        }
        for (Process p : servers.values()) {
            stop(p);
        }
        servers.clear();
        ports.clear(); // a port stands for a server of its block only; after it a URL is the test's mock again
    }

    /** SIGTERM, as Ctrl-C: the server's shutdown hook closes it and its truth log. */
    private static void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() throws Exception {
        stopServers();
    }
}
