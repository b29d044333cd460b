package dev.infersim.demo;

import java.util.List;

/**
 * One rate of the sweep, seen three ways. {@code why} says why a run was added after the sweep (null for the
 * sweep's own rates); {@code serverTruth} is the server's own account of the measured run (the rates its requests
 * arrived and were served at), or null where it was not kept; {@code measuredTtftMs} each measured request's TTFT in
 * the order they were sent, model ms (+Infinity where it failed), empty where not kept, from which the report tells
 * whether the run shows the objective met ({@link ObjectiveMisses}).
 */
record DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
               DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
               String why, DemoSide serverTruth, double[] measuredTtftMs) {

    /**
     * The requests of the steady run ({@code steadySimulated}), the same rate simulated for long enough for the steady
     * state the chain describes, which a run of a few hundred requests near saturation does not reach (its batch is
     * still filling when it ends).
     */
    static final int STEADY_RUN_REQUESTS = 20_000;

    /** A row without the server's account or the measured requests' TTFTs. */
    DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
            DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
            String why) {
        this(rate, fraction, measured, simulated, predicted, steadySimulated, groundTruthP99Ms, measuredValid,
                invalidReasons, why, null);
    }

    /** A row without the measured requests' TTFTs. */
    DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
            DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
            String why, DemoSide serverTruth) {
        this(rate, fraction, measured, simulated, predicted, steadySimulated, groundTruthP99Ms, measuredValid,
                invalidReasons, why, serverTruth, new double[0]);
    }

    /**
     * Whether the measured run shows the queue growing: the client's own numbers where its run is valid, the server's
     * account where the client flagged it invalid (a client too late to trust its latencies still saw the engine's
     * queue grow).
     */
    boolean measuredOverloaded() {
        DemoSide s = measuredKneeSide();
        return s != null && s.overloaded();
    }

    /**
     * Whether this machine's noise, not the engine, decides the objective at this rate: the client's TTFT p99 and the
     * server's own (the same requests, from arrival to first token) lie either side of {@code objectiveMs}, and the
     * server's lies outside the client's 95% interval, so that sampling does not explain the gap. The client's tail
     * then says whether the client was late, not whether the engine met the objective.
     */
    boolean clientDecidesObjective(double objectiveMs) {
        double server = serverTruth == null ? Double.NaN : serverTruth.ttftP99Ms();
        double client = measured.ttftP99Ms();
        DemoSpan span = measured.ttftP99();
        return measuredValid && !Double.isNaN(server) && !Double.isNaN(client)
                && (client > objectiveMs) != (server > objectiveMs) && (server < span.low() || server > span.high());
    }

    /** The measured side the knee may rest on: the client's run if valid, else the server's account, else null. */
    DemoSide measuredKneeSide() {
        return measuredValid ? measured : serverTruth;
    }
}
