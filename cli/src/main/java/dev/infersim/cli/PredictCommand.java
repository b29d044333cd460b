package dev.infersim.cli;

import dev.infersim.cli.options.DeploymentOptions;
import dev.infersim.cli.options.OptionGroup;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.cli.options.ReportOptions;
import dev.infersim.cli.options.TimingOptions;
import dev.infersim.cli.options.WorkloadOptions;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.prediction.ChainPredictionKeys;
import dev.infersim.prediction.ClosedLoopPredictionKeys;
import dev.infersim.prediction.EnginePrediction;
import dev.infersim.prediction.FixedPrediction;
import dev.infersim.prediction.FixedPredictionKeys;
import dev.infersim.prediction.PredictionExplanation;
import dev.infersim.prediction.WorkloadMoments;
import dev.infersim.queueing.CapacityPlanner;
import dev.infersim.queueing.ClosedLoopBatchingModel;
import dev.infersim.queueing.FleetPlan;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.queueing.Slo;
import dev.infersim.queueing.SloCapacity;
import dev.infersim.queueing.UnstableQueueException;
import dev.infersim.result.MetricSummaries;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.PredictionResult;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunHeader;
import dev.infersim.result.RunInfo;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;

/**
 * {@code infersim predict}: the closed-form answer for a deployment and workload: the continuous-batching chain (or,
 * one request at a time, the G/G/1 queue) with its parameters derived from the engine's cost model, its latencies at
 * the requested rate in the fields of a benchmark result, the saturation rate, a capacity plan, and with
 * {@code --explain} the derivation in words.
 */
@Command(name = "predict", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Predict latency and capacity in closed form (queueing models whose service times come from the "
                + "engine's cost model); same flags as simulate, plus SLOs, fleet sizing and --explain.")
public final class PredictCommand implements Runnable {
    @Mixin
    WorkloadOptions workload;

    @Mixin
    ReportOptions reporting;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--request-rate", paramLabel = "REQ_PER_S",
            description = "Poisson arrival rate, req/s, at most " + OptionLimits.MAX_RATE + ", or inf (default: a --workload profile's own rate, a trace's mean "
                    + "rate, else 10; inf with --max-concurrency).")
    String requestRate;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--max-concurrency", paramLabel = "N",
            description = "A closed loop of N clients (at most " + OptionLimits.MAX_CONCURRENCY + "), each sending its next request when its last one ends (vllm bench "
                    + "serve --max-concurrency N --request-rate inf); means only.")
    Integer maxConcurrency;

    @Mixin
    DeploymentOptions deployment;

    @Mixin
    TimingOptions timing;

    @OptionGroup.In(OptionGroup.OBJECTIVES)
    @Option(names = "--slo-ttft-ms", description = "SLO on mean TTFT for the capacity plan, ms (default: none).")
    Double sloTtftMs;

    @OptionGroup.In(OptionGroup.OBJECTIVES)
    @Option(names = "--slo-tpot-ms", description = "SLO on mean TPOT for the capacity plan, ms (default: none).")
    Double sloTpotMs;

    @OptionGroup.In(OptionGroup.OBJECTIVES)
    @Option(names = "--slo-queue-p99-ms", description = "SLO on p99 queueing delay for the capacity plan, ms (default: none).")
    Double sloQueueP99Ms;

    @OptionGroup.In(OptionGroup.OBJECTIVES)
    @Option(names = "--target-rate", description = "Request rate the fleet must carry, req/s, at most " + OptionLimits.MAX_RATE
            + " (default: --request-rate).")
    Double targetRate;

    @OptionGroup.In(OptionGroup.OBJECTIVES)
    @Option(names = "--headroom", defaultValue = "0.2", description = "Fraction of replica capacity held in reserve (default: ${DEFAULT-VALUE}).")
    double headroom;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--explain", description = "Print the derivation: service times, utilisation, which formula and why.")
    boolean explain;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--dollars-per-gpu-hour", defaultValue = "0",
            description = "GPU price for the cost per million output tokens; 0 = no cost line (default: 0).")
    double dollarsPerGpuHour;

    @Override
    public void run() {
        reporting.validate();
        ConfigException.check(headroom >= 0 && headroom < 1, "--headroom must be in [0, 1), got %s", headroom);
        ConfigException.check(dollarsPerGpuHour >= 0, "--dollars-per-gpu-hour must be >= 0, got %s", dollarsPerGpuHour);
        positive("--slo-ttft-ms", sloTtftMs);
        positive("--slo-tpot-ms", sloTpotMs);
        positive("--slo-queue-p99-ms", sloQueueP99Ms);
        rejectWhatTheClosedFormCannotModel();
        if (maxConcurrency != null || "inf".equalsIgnoreCase(requestRate)) {
            closedLoop();
            return;
        }
        // A trace's timestamps are its rate: the spec refuses a rate flag with them, so the rate only enters the model.
        boolean trace = workload.replaysTrace();
        WorkloadSpec spec = workload.specAtRateOr(trace ? null : requestRate, 10, null, 0);
        Workload requests = Workload.open(spec);
        ConfigException.check(spec.load().rampUp() == null,
                "--workload: predict models a steady rate; the profile's load has a ramp");
        double rate = trace && requestRate != null ? WorkloadOptions.parseRate("--request-rate", requestRate)
                : trace ? meanRate(requests) : spec.load().requestRatePerS();
        ConfigException.check(!requests.isClosedLoop() && Double.isFinite(rate),
                "predict models open-loop arrivals: give a finite --request-rate (closed loops and 'inf' have no closed form here)");
        Deployment d = deployment.deployment();
        WorkloadMoments moments = WorkloadMoments.of(requests, 100_000);
        sayOutputCap(spec, moments);
        // The chain serves every request; the engine (and simulate) would reject these, so a prediction would be wrong.
        int maxModelLen = KvCapacity.of(d).maxModelLen();
        ConfigException.check(moments.maxPromptTokens() < maxModelLen,
                "--max-model-len: the workload has prompts of up to %d tokens, which the maximum context of %d tokens "
                        + "(--max-model-len, capped by the KV cache) rejects; predict models only served requests",
                moments.maxPromptTokens(), maxModelLen);
        FixedTiming fixed = timing.fixedTiming();
        ConfigException.check(fixed == null || !explain, "--explain walks through the engine model's prediction; "
                + "--timing fixed has none to explain (its fields say the queue it is)");
        EnginePrediction prediction = fixed == null ? new EnginePrediction(d, moments) : null;
        PredictionResult<?> result = fixed != null ? fixedResult(d, spec, rate, fixed, requests, moments)
                : result(d, spec, rate, prediction);
        print(System.out, result);
        if (explain) {
            new PredictionExplanation(d, prediction, rate, 1 / spec.load().burstiness()).print(System.out);
        }
        save(result, runInfo(d, spec, rate));
    }

    /**
     * {@code --max-concurrency N} (with {@code --request-rate inf}, vLLM's default): N clients in a closed loop. A rate of
     * inf alone sends every prompt at once, a burst that drains; it is predicted as a closed loop of --num-prompts
     * clients, whose steady state the burst passes through, and predict says so.
     */
    private void closedLoop() {
        ConfigException.check(!workload.replaysTrace(), "--max-concurrency: a trace replays its own timestamps; predict "
                + "models a closed loop only with --request-rate inf");
        ConfigException.check(requestRate == null || "inf".equalsIgnoreCase(requestRate),
                "--max-concurrency with a finite --request-rate: predict models an open loop (a finite --request-rate) "
                        + "or a closed loop (--max-concurrency N, --request-rate inf), not both");
        ConfigException.check(timing.fixedTiming() == null, "--max-concurrency: predict's closed loop is the engine "
                + "model's; --timing fixed is predicted at a finite --request-rate only");
        ConfigException.check(!explain && sloTtftMs == null && sloTpotMs == null && sloQueueP99Ms == null && targetRate == null
                        && dollarsPerGpuHour == 0,
                "--explain, --slo-*, --target-rate and --dollars-per-gpu-hour plan an open loop: give a finite --request-rate");
        WorkloadSpec spec = workload.specAtRateOr("inf", 10, maxConcurrency, reporting.numWarmups);
        Deployment d = deployment.deployment();
        ConfigException.check(d.maxNumSeqs() > 1, "--max-concurrency with --max-num-seqs 1: one request at a time is "
                + "predicted at a finite --request-rate only");
        Workload requests = Workload.open(spec);
        WorkloadMoments moments = WorkloadMoments.of(requests, 100_000);
        sayOutputCap(spec, moments);
        int clients = maxConcurrency != null ? maxConcurrency : (int) Math.min(Integer.MAX_VALUE, spec.numPrompts());
        ConfigException.check(clients >= 1, "--max-concurrency must be >= 1, got %d", clients);
        if (maxConcurrency == null) {
            System.err.printf(Locale.ROOT, "infersim: --request-rate inf without --max-concurrency sends all %d prompts at "
                    + "once; predicted as a closed loop of %d clients, the steady state the burst drains through (its late "
                    + "requests wait longer, its last ones run in a smaller batch)%n", clients, clients);
        }
        EnginePrediction prediction = new EnginePrediction(d, moments);
        // warm-ups come on top of --num-prompts (as simulate's): the spec's requests include them
        ClosedLoopBatchingModel m = prediction.closedLoop(clients, reporting.numWarmups, spec.numPrompts());
        RunInfo info = runInfo(d, spec, Double.POSITIVE_INFINITY);
        RunHeader run = header(info, clients);
        List<MetricSummary> means = List.of(mean("ttft", 1e3 * m.meanTtftSeconds()), mean("tpot", 1e3 * m.meanTpotSeconds()),
                mean("itl", 1e3 * m.meanTpotSeconds()), mean("e2el", 1e3 * m.meanE2elSeconds()));
        PredictionResult<ClosedLoopPredictionKeys> f = new PredictionResult<>(run, null,
                PredictionResult.Throughput.of(m.throughputPerS(), moments.meanPromptTokens(), moments.meanOutputTokens()),
                new MetricSummaries(means), new ClosedLoopPredictionKeys(clients,
                m.regime().name().toLowerCase(Locale.ROOT), Double.isFinite(m.roundsToDissolve()) ? m.roundsToDissolve() : null,
                m.regime() == ClosedLoopBatchingModel.Regime.LOCK_STEP ? Integer.valueOf(m.lockStepGroups()) : null, m.batchSize(),
                1e3 * m.meanQueueingDelaySeconds(), m.throughputPerS() * m.meanE2elSeconds(), prediction.batchLimit(),
                moments.meanPromptTokens(), moments.meanOutputTokens(), KvCapacity.of(d).tokens()));
        print(System.out, f);
        System.out.println("Closed loop: means only; throughput x mean E2EL = " + clients + " clients (Little's law).");
        System.out.println(regime(m, clients));
        save(f, info);
    }

    /** Which regime the clients' arrivals are in, in words: the lock step, or how fast their start's cohort dissolves. */
    static String regime(ClosedLoopBatchingModel m, int clients) {
        return switch (m.regime()) {
            case LOCK_STEP -> m.lockStepGroups() == 1
                    ? String.format(Locale.ROOT, "Lock step: equal lengths keep the %d clients together; each round's %d "
                    + "prompts are prefilled in one iteration, and TTFT is that iteration.", clients, m.batchSize())
                    : String.format(Locale.ROOT, "Lock step: equal lengths keep the %d clients together; the token budget "
                    + "takes each round's prompts in %d groups, one iteration each, and TTFT is the group's iteration.",
                    clients, m.lockStepGroups());
            case COHORT -> String.format(Locale.ROOT, "Cohort: the clients start together and their varying lengths "
                    + "spread them out by round %.0f (of each client's requests); TTFT is averaged over the measured "
                    + "rounds, the early ones prefilled in clumps.", m.roundsToDissolve());
            case DISSOLVED -> String.format(Locale.ROOT, "Dissolved: varying lengths spread the clients' start by "
                    + "round %.0f, before the measured requests; arrivals come spread over the cycle.", m.roundsToDissolve());
        };
    }

    /**
     * Says the cap on output lengths where it binds, with the flag that sets it: EOS positions drawn with
     * {@code --eos-mean-tokens} are clipped at each request's max_tokens, which the dataset's output length sets.
     */
    private void sayOutputCap(WorkloadSpec spec, WorkloadMoments m) {
        if (workload.eosMeanTokens == null || spec.ignoreEos() || m.meanOutputTokens() >= 0.98 * workload.eosMeanTokens) {
            return;
        }
        String flag = switch (String.valueOf(spec.datasetName())) {
            case WorkloadSpec.RANDOM -> "--random-output-len " + spec.randomOutputLen();
            case "prefix_repetition" -> "--prefix-repetition-output-len " + spec.prefixRepetitionOutputLen();
            case "sharegpt" -> "--sharegpt-output-len, else the dataset's own output lengths";
            default -> "the dataset's output lengths";
        };
        System.err.printf(Locale.ROOT, "infersim: --eos-mean-tokens %.0f is clipped at each request's max_tokens (%s): "
                + "the mean output is %.1f tokens; raise that to lift the cap%n", workload.eosMeanTokens, flag,
                m.meanOutputTokens());
    }

    /** Past this share of the saturation rate the open-loop prediction is printed with how far it was found off. */
    static final double TRUSTED_LOAD = 0.92;

    private void save(PredictionResult<?> result, RunInfo info) {
        if (reporting.saveResult) {
            String file = reporting.resultFilename != null ? reporting.resultFilename : info.defaultResultFileName();
            Path path = reporting.resultDir.resolve(file);
            ResultJson.write(path, result);
            System.out.println("Result written to " + path);
        }
    }

    /** Flags that would otherwise be accepted and silently left out of a Poisson, mean-value model. */
    private void rejectWhatTheClosedFormCannotModel() {
        ConfigException.check(workload.rampUpStrategy == null,
                "--ramp-up-strategy: predict models a steady rate; predict each rate of the ramp with --request-rate");
        ConfigException.check(!reporting.saveDetailed, "--save-detailed: predict has no per-request values to save");
        ConfigException.check(reporting.goodput.isEmpty(),
                "--goodput: predict gives no per-request latencies; use --slo-ttft-ms, --slo-tpot-ms or --slo-queue-p99-ms");
    }

    private static void positive(String flag, Double ms) {
        ConfigException.check(ms == null || ms > 0, "%s must be > 0 ms, got %s", flag, ms);
    }

    /** A trace's mean arrival rate: its gaps per second between the first and the last timestamp. */
    private static double meanRate(Workload trace) {
        long first = -1;
        long last = 0;
        for (WorkloadRequest r : trace) {
            first = first < 0 ? r.arrivalNanos() : first;
            last = r.arrivalNanos();
        }
        ConfigException.check(last > first, "--dataset-path: the trace spans no time, so it has no rate; give --request-rate");
        return (trace.size() - 1) * 1e9 / (last - first);
    }

    private RunInfo runInfo(Deployment d, WorkloadSpec spec, double rate) {
        return new RunInfo(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")), "infersim-predict",
                d.model().hfId(), d.model().hfId(), spec.numPrompts(), rate,
                spec.load().burstiness(), spec.load().maxConcurrency(), reporting.metrics(), reporting.percentiles());
    }

    /** {@code --timing fixed}: the M/G/c queue of {@link FixedPrediction}; it plans no fleet. */
    private PredictionResult<FixedPredictionKeys> fixedResult(Deployment d, WorkloadSpec spec, double rate,
                                                              FixedTiming fixed, Workload requests, WorkloadMoments m) {
        ConfigException.check(sloTtftMs == null && sloTpotMs == null && sloQueueP99Ms == null && targetRate == null
                        && dollarsPerGpuHour == 0,
                "--slo-*, --target-rate and --dollars-per-gpu-hour plan a fleet from the engine model; with --timing fixed, "
                        + "predict gives the G/G/c queue at --request-rate only");
        return new FixedPrediction(fixed, d.maxNumSeqs(), requests, 100_000).result(header(runInfo(d, spec, rate), null),
                rate, 1 / spec.load().burstiness(), m.meanPromptTokens());
    }

    /** vLLM's run keys of a prediction: no ramp, and a concurrency only for a closed loop of {@code clients}. */
    private static RunHeader header(RunInfo info, Integer clients) {
        return new RunHeader(info.date(), info.backend(), info.modelId(), info.tokenizerId(), info.numPrompts(),
                info.requestRatePerS(), info.burstiness(), clients, null, null, null);
    }

    /** The prediction in the result schema: vLLM's keys where the model gives them, infersim_ keys for the rest. */
    PredictionResult<ChainPredictionKeys> result(Deployment d, WorkloadSpec spec, double rate, EnginePrediction p) {
        WorkloadMoments m = p.moments();
        double saturation = p.saturationRatePerS();
        PredictionResult.Throughput throughput = null;
        MetricSummaries latencies = MetricSummaries.NONE;
        String reason = null;
        String note = null;
        LatencyModel model = null;
        try {
            model = p.at(rate, 1 / spec.load().burstiness());
            throughput = PredictionResult.Throughput.of(rate, m.meanPromptTokens(), m.meanOutputTokens());
            latencies = new MetricSummaries(List.of(latency("ttft", model.meanTtftSeconds(), model::ttftPercentileSeconds),
                    latency("tpot", model.meanTpotSeconds(), model::tpotPercentileSeconds),
                    latency("itl", model.meanItlSeconds(), model::itlPercentileSeconds),
                    latency("e2el", model.meanE2elSeconds(), model::e2elPercentileSeconds)));
            if (rate / saturation > TRUSTED_LOAD) {
                note = String.format(Locale.ROOT, "at %.0f%% of the saturation rate the queue's tail is least "
                        + "certain: at 95%% (llama-3.1-8b, h100, 1024/128 tokens) mean TTFT came out 18%% and p99 TTFT 53%% "
                        + "short of a 20,000-request simulation (bench/queueing/README.md); read TTFT and E2EL as lower "
                        + "bounds here", 100 * rate / saturation);
                System.err.println("infersim: " + note);
            }
        } catch (UnstableQueueException e) {
            reason = PredictionExplanation.unstable(rate, saturation);
        }
        boolean stable = reason == null;
        SloCapacity capacity = capacity(p, 1 / spec.load().burstiness());
        FleetPlan fleet = capacity.feasible() ? fleetPlan(d, capacity, rate) : null;
        ChainPredictionKeys keys = new ChainPredictionKeys(!stable, reason,
                stable ? model.utilization() : null, note, stable ? model.probabilityOfWait() : null,
                stable ? 1e3 * model.meanQueueingDelaySeconds() : null, stable ? model.meanBatchSize() : null,
                stable ? model.meanNumberInSystem() : null, saturation, saturation * m.meanOutputTokens(),
                p.batchLimit(), p.batchLimit() < d.maxNumSeqs(), m.meanPromptTokens(), m.meanOutputTokens(),
                KvCapacity.of(d).tokens(), capacity.maxRatePerS(), capacity.bindingMetric().toString(),
                fleet == null ? null : fleet.targetRatePerS(), fleet == null ? null : fleet.replicas(),
                fleet == null ? null : fleet.gpus(), fleet == null || dollarsPerGpuHour <= 0 ? null
                        : fleet.dollarsPerMillionOutputTokens(dollarsPerGpuHour, m.meanOutputTokens()));
        return new PredictionResult<>(header(runInfo(d, spec, rate), null), null, throughput, latencies, keys);
    }

    private MetricSummary latency(String metric, double meanSeconds, DoubleUnaryOperator percentile) {
        return new MetricSummary(metric, 1e3 * meanSeconds, 1e3 * percentile.applyAsDouble(0.5), null,
                reporting.percentiles().stream()
                        .map(q -> new MetricSummary.Percentile(q, 1e3 * percentile.applyAsDouble(q / 100))).toList());
    }

    private static MetricSummary mean(String metric, double ms) {
        return new MetricSummary(metric, ms, null, null, List.of());
    }

    /** The highest rate meeting the SLO flags, and the objective that bounds it. */
    private SloCapacity capacity(EnginePrediction p, double arrivalScv) {
        Slo slo = Slo.none();
        if (sloTtftMs != null) {
            slo = slo.withMeanTtft(sloTtftMs / 1e3);
        }
        if (sloTpotMs != null) {
            slo = slo.withMeanTpot(sloTpotMs / 1e3);
        }
        if (sloQueueP99Ms != null) {
            slo = slo.withQueueingDelay(0.99, sloQueueP99Ms / 1e3);
        }
        return CapacityPlanner.maxRateMeetingSlo(p.saturationRatePerS(), r -> p.at(r, arrivalScv), slo);
    }

    /** The fleet that carries --target-rate (default: the predicted rate) with the SLO met on every replica. */
    private FleetPlan fleetPlan(Deployment d, SloCapacity capacity, double rate) {
        double target = targetRate != null ? targetRate : rate;
        ConfigException.check(target > 0 && Double.isFinite(target), "--target-rate must be > 0, got %s", target);
        return FleetPlan.forTargetRate(target, capacity.maxRatePerS(), headroom, d.tensorParallelSize());
    }

    /** Every key of the result and its value, doubles to three decimals, in the order the file has them. */
    private static void print(PrintStream out, PredictionResult<?> result) {
        out.println("=============== Predicted (closed form) ===============");
        for (Iterator<Map.Entry<String, JsonNode>> it = ResultJson.tree(result).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode v = e.getValue();
            String text = v.isDouble() ? String.format(Locale.ROOT, "%.3f", v.doubleValue()) : v.asText();
            out.printf(Locale.ROOT, "%-46s %s%n", e.getKey(), text);
        }
        out.println("=======================================================");
    }
}
