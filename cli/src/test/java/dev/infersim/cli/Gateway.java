package dev.infersim.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A real nginx or HAProxy on loopback in front of mock replicas, configured as a team would front vLLM pods for SSE:
 * nginx with {@code proxy_buffering off}, HTTP/1.1 keep-alive to the upstreams and a read timeout above any token gap;
 * HAProxy in HTTP mode with {@code option http-no-delay}, so that each event is sent as it comes (without it HAProxy
 * held small writes for more and added 13.5 ms to the TTFT p50). Either can also be started as teams misconfigure
 * it for streaming: nginx with its default {@code proxy_buffering on}, HAProxy without {@code http-no-delay}. Tests
 * skip where the binary is missing unless {@code INFERSIM_REQUIRE_GATEWAYS=1} (CI) makes that a failure.
 */
final class Gateway implements AutoCloseable {
    enum Kind {
        NGINX("/usr/sbin/nginx"), HAPROXY("/usr/sbin/haproxy");

        final String binary;

        Kind(String binary) {
            this.binary = binary;
        }

        boolean installed() {
            return Files.isExecutable(Path.of(binary));
        }
    }

    private final Process process;
    private final int port;

    private Gateway(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static boolean required() {
        return "1".equals(System.getenv("INFERSIM_REQUIRE_GATEWAYS"));
    }

    /** Skips the test where {@code kind} is not installed, unless CI requires the gateways. */
    static void assumeInstalled(Kind kind) {
        if (required()) {
            org.junit.jupiter.api.Assertions.assertTrue(kind.installed(), kind.binary
                    + " is missing but INFERSIM_REQUIRE_GATEWAYS=1");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(kind.installed(), kind.binary
                + " is not installed (apt-get install nginx haproxy); gateway test skipped");
    }

    /** Closes the replicas behind the gateways, if they started. */
    static void stop(dev.infersim.server.fleet.MockFleet fleet) throws Exception {
        if (fleet != null) {
            fleet.close(java.time.Duration.ofSeconds(5)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Starts {@code kind} balancing over {@code replicaPorts} by least connections or round robin. */
    static Gateway start(Kind kind, boolean leastConnections, List<Integer> replicaPorts, Path dir) throws Exception {
        return start(kind, leastConnections, replicaPorts, dir, true);
    }

    /**
     * @param forStreaming configured for event streams as above; false leaves the setting at the gateway's default
     *                     (nginx buffers responses, HAProxy lets the kernel hold small writes)
     */
    static Gateway start(Kind kind, boolean leastConnections, List<Integer> replicaPorts, Path dir, boolean forStreaming)
            throws Exception {
        return start(kind, leastConnections, replicaPorts, dir, forStreaming, null);
    }

    /**
     * nginx that gives up on a replica whose response has not begun within {@code retryAfterMs} and sends the request
     * to the next one (proxy_next_upstream for POST too), never taking the slow replica out of rotation.
     */
    static Gateway nginxRetrying(List<Integer> replicaPorts, Path dir, long retryAfterMs) throws Exception {
        return start(Kind.NGINX, false, replicaPorts, dir, true, "      proxy_read_timeout " + retryAfterMs + "ms;\n"
                + "      proxy_next_upstream error timeout non_idempotent;");
    }

    /**
     * Round robin with each refusal of {@code status} (429 or 503) tried again at once on the next replica, as teams
     * set gateways to hide a busy replica's refusals: nginx {@code proxy_next_upstream http_429} (or http_503, with
     * {@code non_idempotent} for POST and {@code max_fails=0}, so that the refusing replica stays in rotation); HAProxy
     * {@code retry-on 503} with {@code retries 3} and {@code option redispatch 1} (every retry on another server).
     * With {@code retry} false the same gateway passes the refusal on to the client.
     */
    static Gateway retryingRefusals(Kind kind, int status, boolean retry, List<Integer> replicaPorts, Path dir)
            throws Exception {
        if (kind == Kind.NGINX) {
            return start(kind, false, replicaPorts, dir, true, "      proxy_read_timeout 300s;\n"
                    + (retry ? "      proxy_next_upstream error timeout http_" + status + " non_idempotent;" : ""));
        }
        return start(kind, false, replicaPorts, dir, true, retry ? "  retry-on " + status + "\n  retries 3\n"
                + "  option redispatch 1" : "");
    }

    /**
     * @param extra lines for nginx's proxy location (its read timeout and next-upstream rule; null: 300 s, nginx's
     *              default rule) or HAProxy's backend (null: none); given lines also keep nginx's replicas in rotation
     */
    private static Gateway start(Kind kind, boolean leastConnections, List<Integer> replicaPorts, Path dir,
                                 boolean forStreaming, String extra) throws Exception {
        Files.createDirectories(dir);
        // A gateway cannot bind port 0 and report it back, so take a free port and retry if another process wins it.
        for (int attempt = 0; ; attempt++) {
            int port = FreePorts.one();
            Path config = dir.resolve(kind.name().toLowerCase(Locale.ROOT) + ".conf");
            Files.writeString(config, kind == Kind.NGINX
                    ? nginx(dir, port, leastConnections, replicaPorts, forStreaming, extra)
                    : haproxy(port, leastConnections, replicaPorts, forStreaming, extra));
            List<String> command = kind == Kind.NGINX
                    ? List.of(kind.binary, "-p", dir.toString(), "-e", dir.resolve("error.log").toString(), "-c", config.toString())
                    : List.of(kind.binary, "-db", "-f", config.toString());
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile()).start();
            if (awaitListening(p, port)) {
                return new Gateway(p, port);
            }
            p.destroy();
            p.waitFor(5, TimeUnit.SECONDS);
            if (attempt == 2) {
                throw new IllegalStateException(kind + " did not start: " + Files.readString(dir.resolve("out.log")));
            }
        }
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    private static String nginx(Path dir, int port, boolean leastConnections, List<Integer> replicas,
                                boolean forStreaming, String extra) {
        StringBuilder servers = new StringBuilder();
        replicas.forEach(p -> servers.append("    server 127.0.0.1:").append(p)
                .append(extra != null ? " max_fails=0" : "").append(";\n"));
        return String.join("\n",
                "daemon off;",
                "master_process off;",
                "worker_processes 1;",
                "pid " + dir.resolve("nginx.pid") + ";",
                "error_log " + dir.resolve("error.log") + " warn;",
                "events { worker_connections 4096; }",
                "http {",
                "  access_log off;",
                "  client_body_temp_path " + dir.resolve("body") + ";",
                "  proxy_temp_path " + dir.resolve("proxy") + ";",
                "  fastcgi_temp_path " + dir.resolve("fastcgi") + ";",
                "  uwsgi_temp_path " + dir.resolve("uwsgi") + ";",
                "  scgi_temp_path " + dir.resolve("scgi") + ";",
                "  upstream fleet {",
                leastConnections ? "    least_conn;" : "",
                servers + "    keepalive 256;",
                "  }",
                "  server {",
                "    listen 127.0.0.1:" + port + ";",
                "    location / {",
                "      proxy_pass http://fleet;",
                "      proxy_http_version 1.1;",
                "      proxy_set_header Connection \"\";",
                "      proxy_buffering " + (forStreaming ? "off" : "on") + ";",
                extra != null ? extra : "      proxy_read_timeout 300s;",
                "    }",
                "  }",
                "}", "");
    }

    private static String haproxy(int port, boolean leastConnections, List<Integer> replicas, boolean forStreaming,
                                  String extra) {
        StringBuilder servers = new StringBuilder();
        for (int i = 0; i < replicas.size(); i++) {
            servers.append("  server r").append(i).append(" 127.0.0.1:").append(replicas.get(i)).append('\n');
        }
        return String.join("\n",
                "global",
                "  maxconn 4096",
                "defaults",
                "  mode http",
                // forward each SSE event at once: by default HAProxy asks the kernel to hold small writes for more
                forStreaming ? "  option http-no-delay" : "",
                "  timeout connect 5s",
                "  timeout client 300s",
                "  timeout server 300s",
                "frontend gateway",
                "  bind 127.0.0.1:" + port,
                "  default_backend fleet",
                "backend fleet",
                "  balance " + (leastConnections ? "leastconn" : "roundrobin"),
                extra != null ? extra : "",
                servers.toString());
    }

    private static boolean awaitListening(Process p, int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                return false;
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException e) {
                Thread.sleep(20);
            }
        }
        return false;
    }
}
