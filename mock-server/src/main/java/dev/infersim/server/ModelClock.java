package dev.infersim.server;

/**
 * Maps the engine's model time to the wall clock. Model time is what the modelled GPU would take, in nanoseconds since
 * the server started; at time scale k the server runs k times faster, so {@code wall = start + model / k}. Every
 * engine timestamp (arrival, step ends, token times) is model time; the {@code infersim} ground truth reports both.
 */
public final class ModelClock {
    private final long startWallNanos;
    private final double timeScale;
    private final double startEpochMillis;

    public ModelClock(double timeScale) {
        this.timeScale = timeScale;
        this.startWallNanos = System.nanoTime();
        this.startEpochMillis = System.currentTimeMillis() + (System.nanoTime() - startWallNanos) / 1e6;
    }

    /** Model nanoseconds now. */
    public long modelNow() {
        return toModel(System.nanoTime());
    }

    /** Model time of a {@link System#nanoTime()} reading. */
    public long toModel(long wallNanos) {
        return (long) ((wallNanos - startWallNanos) * timeScale);
    }

    /** The {@link System#nanoTime()} at which a model instant happens. */
    public long toWall(long modelNanos) {
        return startWallNanos + (long) (modelNanos / timeScale);
    }

    /** Unix epoch milliseconds (fractional) of a model instant, for clients on other hosts. */
    public double toEpochMillis(long modelNanos) {
        return startEpochMillis + modelNanos / timeScale / 1e6;
    }

    public double timeScale() {
        return timeScale;
    }
}
