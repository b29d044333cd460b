package dev.infersim.cli;

import dev.infersim.common.ConfigException;
import dev.infersim.server.observe.Dashboard;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Serves a {@link SimulationReplay} on the dashboard's page, on loopback, until the process is interrupted. */
final class ReplayServer {
    private ReplayServer() {
    }

    /** A per-request detail file for the replay alone, deleted when the JVM exits. */
    static Path temporaryDetail() {
        try {
            Path f = Files.createTempFile("infersim-replay-", ".jsonl");
            f.toFile().deleteOnExit();
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the replay's temporary file: " + e.getMessage(), e);
        }
    }

    /** Starts the server; the caller closes the returned Vert.x. */
    static Started start(SimulationReplay replay, int port) {
        Vertx vertx = Vertx.vertx();
        Router router = Router.router(vertx);
        Dashboard.mount(vertx, router, replay::viewer);
        try {
            HttpServer server = vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1")
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            return new Started(vertx, server.actualPort());
        } catch (ExecutionException | TimeoutException e) {
            vertx.close();
            throw new ConfigException("--dashboard-port " + port + ": cannot listen (" + e.getCause() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            vertx.close();
            throw new IllegalStateException(e);
        }
    }

    record Started(Vertx vertx, int port) {
    }

    static void serveUntilInterrupted(SimulationReplay replay, int port, PrintStream out) {
        Started started = start(replay, port);
        out.printf("Replay of the simulation at http://127.0.0.1:%d/dashboard (each viewer from the start); Ctrl-C to stop%n",
                started.port());
        out.flush();
        try {
            new CountDownLatch(1).await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            started.vertx().close();
        }
    }
}
