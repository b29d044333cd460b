package dev.infersim.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Keeps an interrupted run honest: on SIGINT the hook stops the benchmark client or the simulation, then waits until
 * the command has written what it measured (the command counts the latch down when its files are written) before the
 * JVM exits.
 */
final class InterruptGuard implements AutoCloseable {
    private final CountDownLatch written = new CountDownLatch(1);
    private final Thread hook;

    InterruptGuard(Runnable stop) {
        hook = new Thread(() -> {
            stop.run();
            try {
                written.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "infersim-interrupt");
        Runtime.getRuntime().addShutdownHook(hook);
        EarlyInterrupt.handOver();
    }

    /** The command has written its outputs (or failed): let an interrupted JVM exit. */
    @Override
    public void close() {
        written.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running: it is waiting for the latch just released
        }
    }
}
