package dev.infersim.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Stream;

/**
 * The corpus of hostile request bodies (issue 35: schemas and patterns whose output explodes, huge names and prompts,
 * many choices, large embeddings answers), kept as the seeds of {@link HostileBodiesFuzzTest} and replayed by
 * {@link HostileBodiesTest} and by {@code bench/mock-server/hostile-bodies.sh} against a running server.
 *
 * <p>A file is the route on its first line, then the body. So that a 5 MB body is a 60-byte file (and a fuzzer's
 * input stays small), {@code <<N*TEXT>>} in the body stands for TEXT written N times, with {@code {i}} in TEXT
 * replaced by the copy's index; an expansion stops one byte past the server's 16 MiB body limit.
 */
final class HostileCorpus {
    /** Where the seeds live (Jazzer's regression inputs of {@link HostileBodiesFuzzTest}). */
    static final String RESOURCE = "dev/infersim/server/HostileBodiesFuzzTestInputs/everyBodyIsAnsweredInTimeWithoutStallingAnEventLoop";
    /** One byte past {@code ServerOptions}' default body limit: an expansion larger than that is refused with 413. */
    static final int MAX_EXPANDED = (16 << 20) + 1;
    /** The routes a body may take; a first line that names none picks one of them (a fuzzer's mutation). */
    static final List<String> ROUTES = List.of("/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages",
            "/tokenize", "/v1/embeddings");

    /** One hostile request: its name (the file's), route and expanded body. */
    record Entry(String name, String route, byte[] body) {
        boolean pooling() {
            return route.equals("/v1/embeddings");
        }
    }

    private HostileCorpus() {
    }

    /** Every entry of the corpus, in name order. */
    static List<Entry> entries() {
        URL dir = HostileCorpus.class.getClassLoader().getResource(RESOURCE);
        if (dir == null) {
            throw new IllegalStateException("no corpus at " + RESOURCE);
        }
        try {
            return read(Paths.get(dir.toURI()));
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Entry> read(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            List<Entry> out = new ArrayList<>();
            for (Path f : files.sorted().toList()) {
                out.add(parse(f.getFileName().toString(), Files.readAllBytes(f)));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An entry from a file's bytes (or a fuzzer's input): route line, then the body with its repetitions expanded. */
    static Entry parse(String name, byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8);
        int nl = text.indexOf('\n');
        String first = (nl < 0 ? "" : text.substring(0, nl)).trim();
        String route = ROUTES.contains(first) ? first : ROUTES.get(Math.floorMod(first.hashCode(), ROUTES.size()));
        return new Entry(name, route, expand(nl < 0 ? text : text.substring(nl + 1)));
    }

    /** The body with each {@code <<N*TEXT>>} written out, at most {@link #MAX_EXPANDED} bytes. */
    static byte[] expand(String body) {
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (at < body.length() && out.length() < MAX_EXPANDED) {
            int open = body.indexOf("<<", at);
            int star = open < 0 ? -1 : body.indexOf('*', open);
            int close = star < 0 ? -1 : body.indexOf(">>", star);
            if (close < 0 || !body.substring(open + 2, star).matches("\\d{1,9}")) {
                int literalEnd = open < 0 || close < 0 ? body.length() : open + 2;
                out.append(body, at, literalEnd);
                at = literalEnd;
                continue;
            }
            out.append(body, at, open);
            int n = Integer.parseInt(body.substring(open + 2, star));
            String text = body.substring(star + 1, close);
            boolean indexed = text.contains("{i}");
            for (int i = 0; i < n && out.length() < MAX_EXPANDED; i++) {
                out.append(indexed ? text.replace("{i}", Integer.toString(i)) : text);
            }
            at = close + 2;
        }
        byte[] bytes = out.toString().getBytes(StandardCharsets.UTF_8);
        return bytes.length > MAX_EXPANDED ? java.util.Arrays.copyOf(bytes, MAX_EXPANDED) : bytes;
    }

    /**
     * How a server answered: the status; when its head came (the answer: a body then comes as fast as the client reads
     * it, a stream goes on by design and the test hangs up after the head); when a body that is no stream was read
     * whole; and its first bytes.
     */
    record Answer(int status, long headNanos, long wholeNanos, String start) {
        double ms() {
            return headNanos / 1e6;
        }

        double wholeMs() {
            return wholeNanos / 1e6;
        }
    }

    /** Sends {@code e} to the server at {@code baseUrl} and waits for its answer, at most {@code timeout}. */
    static Answer send(HttpClient http, String baseUrl, Entry e, Duration timeout) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + e.route())).timeout(timeout)
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(e.body())).build();
        long start = System.nanoTime();
        HttpResponse<InputStream> r = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        long head = System.nanoTime() - start;
        try (InputStream body = r.body()) {
            if (r.headers().firstValue("content-type").orElse("").startsWith("text/event-stream")) {
                return new Answer(r.statusCode(), head, head, "(stream)");
            }
            byte[] first = body.readNBytes(200);
            long rest = body.transferTo(java.io.OutputStream.nullOutputStream());
            String text = new String(first, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
            return new Answer(r.statusCode(), head, System.nanoTime() - start, rest > 0 ? text + "..." : text);
        }
    }

    /**
     * Polls {@code GET /health} on several keep-alive connections at once (so that one shares the event loop of any
     * other connection) and keeps the longest wait: what a server's other clients saw while a hostile request ran.
     */
    static final class HealthProbe implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong longestNanos = new AtomicLong();
        /** Each connection's probe in flight: when it was sent, 0 when none is. */
        private final AtomicLongArray sentAt;
        private final List<Thread> threads = new ArrayList<>();

        HealthProbe(String baseUrl, int connections) {
            sentAt = new AtomicLongArray(connections);
            HttpRequest health = HttpRequest.newBuilder(URI.create(baseUrl + "/health")).timeout(Duration.ofSeconds(60)).build();
            for (int c = 0; c < connections; c++) {
                int slot = c;
                HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                Thread t = new Thread(() -> {
                    while (running.get()) {
                        long start = System.nanoTime();
                        sentAt.set(slot, start);
                        try {
                            client.send(health, HttpResponse.BodyHandlers.discarding());
                        } catch (IOException e) {
                            // a probe that failed waited as long as it took
                        } catch (InterruptedException e) {
                            return;
                        }
                        sentAt.set(slot, 0);
                        longestNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                        try {
                            Thread.sleep(2);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "health-probe-" + c);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        /** The longest wait since the last call, in ms, a probe still waiting included; then starts afresh. */
        double takeLongestMs() {
            long now = System.nanoTime();
            long longest = longestNanos.getAndSet(0);
            for (int c = 0; c < sentAt.length(); c++) {
                long sent = sentAt.get(c);
                longest = sent == 0 ? longest : Math.max(longest, now - sent);
            }
            return longest / 1e6;
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            for (Thread t : threads) {
                t.interrupt();
                t.join(5_000);
            }
        }
    }

    /**
     * Replays the corpus against a running server: {@code BASE_URL CORPUS_DIR [NAME...]} (embeddings only against a
     * pooling server, the rest only against a generating one: give their names). One line per body: status, answer
     * time (its head), the time to its whole body, the longest {@code /health} wait meanwhile, and the answer's start
     * ({@code bench/mock-server/hostile-bodies.sh} prints the header).
     */
    public static void main(String[] args) throws Exception {
        String base = args[0];
        List<Entry> entries = read(Paths.get(args[1]));
        List<String> names = List.of(args).subList(2, args.length);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (HealthProbe probe = new HealthProbe(base, 4)) {
            Thread.sleep(300);
            for (Entry e : entries) {
                if (!names.isEmpty() && !names.contains(e.name())) {
                    continue;
                }
                probe.takeLongestMs();
                String status;
                String ms;
                String whole;
                String start;
                long t0 = System.nanoTime();
                try {
                    Answer a = send(http, base, e, Duration.ofSeconds(20));
                    status = Integer.toString(a.status());
                    ms = String.format(Locale.ROOT, "%.0f", a.ms());
                    whole = String.format(Locale.ROOT, "%.0f", a.wholeMs());
                    start = a.start();
                } catch (IOException ex) {
                    status = "none";
                    ms = String.format(Locale.ROOT, ">%.0f", (System.nanoTime() - t0) / 1e6);
                    whole = "-";
                    start = ex.getClass().getSimpleName() + (ex.getMessage() == null ? "" : ": " + ex.getMessage());
                }
                Thread.sleep(50);
                System.out.printf(Locale.ROOT, "%-56s %6s %9s %9s %14.0f  %s%n", e.name(), status, ms, whole,
                        probe.takeLongestMs(), start.length() > 150 ? start.substring(0, 150) : start);
            }
        }
    }
}
