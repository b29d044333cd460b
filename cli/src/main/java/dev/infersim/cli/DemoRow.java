package dev.infersim.cli;

import java.util.List;

/**
 * One rate of the sweep, seen three ways. {@code why} says why a run was added after the sweep (null for the
 * sweep's own rates).
 */
record DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
               DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
               String why) {
}
