package dev.infersim.demo;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.result.FlatRecordReader;

import java.util.List;

/**
 * The demo's comparison as {@code demo --save-result} writes it and its page draws it: the saturation rates, each
 * method's knee and highest rate meeting the TTFT p99 objective with their 95% intervals, whether those conclusions are
 * stable, every measured rate seen three ways, the simulated and predicted curves, and the notes on where the methods
 * differ. Rates per model second, latencies in model-time milliseconds; null where a method has no number.
 *
 * @param simulatedSaturationRatePerS null when the simulated capacity was not run
 * @param stability                   null before the sweep's conclusions were judged
 * @param closedLoop                  null until the closed loop has run, and under fixed timing
 * @param calibration                 how the time scale was chosen; null until then
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
record DemoResult(double timeScale, String predictor, double predictedSaturationRatePerS,
                  Double simulatedSaturationRatePerS, ByMethod<Double> kneeRatePerS,
                  ByMethod<List<Double>> kneeRateCi95, double sloTtftP99Ms, ByMethod<Double> highestRateMeetingSlo,
                  ByMethod<List<Double>> highestRateMeetingSloCi95, Stability stability, int extraRuns,
                  String percentileCiMethod, List<Row> rows, List<SimulatedPoint> simulatedCurve,
                  List<PredictedPoint> predictedCurve, List<String> notes, ClosedLoop closedLoop,
                  Calibration calibration) {

    /** This comparison with the closed loop's points ({@link DemoClosedLoop}). */
    DemoResult withClosedLoop(ClosedLoop c) {
        return new DemoResult(timeScale, predictor, predictedSaturationRatePerS, simulatedSaturationRatePerS,
                kneeRatePerS, kneeRateCi95, sloTtftP99Ms, highestRateMeetingSlo, highestRateMeetingSloCi95, stability,
                extraRuns, percentileCiMethod, rows, simulatedCurve, predictedCurve, notes, c, calibration);
    }

    /** This comparison with how its time scale was chosen ({@link DemoCalibration}). */
    DemoResult withCalibration(Calibration c) {
        return new DemoResult(timeScale, predictor, predictedSaturationRatePerS, simulatedSaturationRatePerS,
                kneeRatePerS, kneeRateCi95, sloTtftP99Ms, highestRateMeetingSlo, highestRateMeetingSloCi95, stability,
                extraRuns, percentileCiMethod, rows, simulatedCurve, predictedCurve, notes, closedLoop, c);
    }

    /**
     * How the time scale was chosen ({@link DemoCalibration}): the client's TTFT error budget in model ms, whether the
     * chosen scale kept within it, each calibration round, and the words the demo printed.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Calibration(double timeScale, double noiseBudgetMs, boolean withinBudget, List<CalibrationRound> rounds,
                       String words) {
        static Calibration of(DemoCalibration.Choice c) {
            return new Calibration(c.timeScale(), c.budgetModelMs(), c.withinBudget(), c.rounds().stream()
                    .map(r -> new CalibrationRound(r.timeScale(), finite(r.errorP99WallMs()), finite(r.errorModelMs()),
                            r.stepLagP99WallMs(), r.requests())).toList(), c.words());
        }
    }

    /** One calibration run: the client's TTFT error p99 in wall and model ms, the mock's step lag p99 in wall ms. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record CalibrationRound(double timeScale, Double ttftErrorP99WallMs, Double ttftErrorP99ModelMs,
                            double stepLagP99WallMs, long requests) {
    }

    /**
     * The closed loop ({@link DemoClosedLoop}): the batch the engine sustains, the tolerances of Little's law in the
     * simulation and of the prediction against it, and each concurrency's means.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClosedLoop(int batchLimit, double littlesLawTolerance, double predictionTolerance,
                      List<ClosedLoopPoint> points) {
    }

    /** One concurrency (vLLM's {@code max_concurrency}), simulated and predicted. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClosedLoopPoint(int maxConcurrency, ClosedLoopSide simulated, ClosedLoopSide predicted) {
    }

    /**
     * One method's means at one concurrency, in model time: vLLM's request and output throughputs (steady state), mean
     * E2EL and TTFT, and throughput times mean E2EL, which Little's law says is the concurrency.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClosedLoopSide(double requestThroughput, double outputThroughput, double meanE2elMs, double meanTtftMs,
                          double throughputTimesMeanE2el) {
    }

    /** One value of each method. */
    record ByMethod<T>(T measured, T simulated, T predicted) {
    }

    /** The sweep's verdict on its conclusions: their relative half-widths against the tolerances. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Stability(boolean stable, Double kneeRelativeHalfWidth, Double sloRateRelativeHalfWidth,
                     double kneeTolerance, double sloRateTolerance, int extraRuns, String words) {
    }

    /**
     * One method's numbers at one rate ({@link DemoSide}): latency percentiles with their 95% intervals
     * ({@code [low, high]}, high null where unbounded), the requests completed per second over the second half of
     * sending (past the knee at most the engine's capacity) and vLLM's steady request throughput, requests waiting,
     * the rate sent and served late in the run, and whether the run saturated or was overloaded.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Side(Double medianTtftMs, List<Double> medianTtftMsCi95, Double p99TtftMs, List<Double> p99TtftMsCi95,
                Double medianTpotMs, List<Double> medianTpotMsCi95, Double completedRequestRate,
                Double steadyRequestThroughput, Double meanRequestsWaiting, Double sendRate, Double lateServiceRate,
                boolean saturated, boolean overloaded) {

        static Side of(DemoSide s) {
            return new Side(finite(s.ttftP50Ms()), s.ttftP50().toJson(), finite(s.ttftP99Ms()), s.ttftP99().toJson(),
                    finite(s.tpotP50Ms()), s.tpotP50().toJson(), finite(s.completedPerS()), finite(s.requestsPerS()),
                    finite(s.meanWaiting()), finite(s.sendRatePerS()), finite(s.lateServiceRatePerS()), s.saturated(),
                    s.overloaded());
        }
    }

    /**
     * A measured rate: its share of the predicted saturation rate, why it was added after the sweep (null for the
     * sweep's own), each method's side, the client's TTFT p99 error against the server's truth, and the run's validity.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Row(double requestRate, double fractionOfPredictedSaturation, String addedBecause, Side measured,
               Side simulated, Side predicted, Side simulatedSteadyState, double clientVsServerTtftP99Ms,
               boolean measuredValid, List<String> measuredInvalidReasons) {
    }

    /** A rate of the simulated curve: the mean of its replications. */
    @JsonDeserialize(using = FlatRecordReader.class)
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record SimulatedPoint(double requestRate, int replications, @JsonUnwrapped Side side) {
    }

    /** A rate of the predicted curve. */
    @JsonDeserialize(using = FlatRecordReader.class)
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record PredictedPoint(double requestRate, @JsonUnwrapped Side side) {
    }

    static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
