package dev.infersim.engine;

/** The wall time of one engine iteration, from its shape. Implementations are pure functions of the shape. */
public interface CostModel {

    /** Duration of an iteration of the given shape, in nanoseconds. */
    long stepNanos(BatchShape shape);
}
