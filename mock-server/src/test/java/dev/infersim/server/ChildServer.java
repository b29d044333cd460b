package dev.infersim.server;

/**
 * A mock server in a process of its own, for tests that must change what the process has (its descriptor limit, its
 * heap): prints {@code PORT n} once it listens and stops when its standard input ends.
 */
public final class ChildServer {
    private ChildServer() {
    }

    public static void main(String[] args) throws Exception {
        MockServer server = MockServer.start(TestServers.options(TestServers.llama8b(16), 100).eventLoops(2).build())
                .toCompletionStage().toCompletableFuture().get();
        System.out.println("PORT " + server.port());
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the test closes our input
        }
        System.exit(0);
    }

    /** Starts one: {@code shellPrefix} runs before the JVM (e.g. {@code ulimit -n 256}); {@code jvmArgs} go to it. */
    static Process start(String shellPrefix, String... jvmArgs) throws java.io.IOException {
        String java = System.getProperty("java.home") + "/bin/java";
        StringBuilder command = new StringBuilder(shellPrefix).append("; exec '").append(java).append("'");
        for (String a : jvmArgs) {
            command.append(" '").append(a).append("'");
        }
        command.append(" -cp '").append(System.getProperty("java.class.path")).append("' ").append(ChildServer.class.getName());
        return new ProcessBuilder("bash", "-c", command.toString()).redirectErrorStream(true).start();
    }

    /** Reads the child's output up to its {@code PORT} line; the port. */
    static int port(Process child, StringBuilder output) throws java.io.IOException {
        java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            output.append(line).append('\n');
            if (line.startsWith("PORT ")) {
                Thread drain = new Thread(() -> {
                    try {
                        for (String l = out.readLine(); l != null; l = out.readLine()) {
                            synchronized (output) {
                                output.append(l).append('\n');
                            }
                        }
                    } catch (java.io.IOException ignored) {
                        // the child ended
                    }
                }, "child-output");
                drain.setDaemon(true);
                drain.start();
                return Integer.parseInt(line.substring(5).trim());
            }
        }
        throw new IllegalStateException("the child server ended before listening:\n" + output);
    }
}
