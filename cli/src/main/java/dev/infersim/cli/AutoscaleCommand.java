package dev.infersim.cli;

import dev.infersim.cli.options.AutoscaleOptions;
import dev.infersim.cli.options.OptionGroup;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.infersim.common.ConfigException;
import dev.infersim.result.ResultJson;
import dev.infersim.sim.Autoscaler;
import dev.infersim.sim.FleetObservation;
import dev.infersim.sim.ReplicaSeries;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code infersim autoscale}: the autoscaler {@code simulate --autoscaler} runs in virtual time, here on the real clock
 * against a live fleet ({@code infersim serve --replicas}): every sync period it reads the fleet through
 * {@code /admin/replicas} and each ready replica's {@code /metrics}, asks the same {@link Autoscaler} for a replica
 * count, and posts it. Time passed to the autoscaler is the fleet's model time ({@code --time-scale} times wall time),
 * so the same flags give the same policy as in the simulator.
 */
@Command(name = "autoscale", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Autoscale a live fleet (infersim serve --replicas, or anything answering GET/POST /admin/replicas "
                + "with vLLM /metrics on its replicas) with the autoscaler simulate --autoscaler uses.")
public final class AutoscaleCommand implements Runnable {

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--fleet", required = true, paramLabel = "URL",
            description = "Base URL of the fleet's first replica, where /admin/replicas is.")
    String fleetUrl;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--autoscaler", defaultValue = "hpa", description = "hpa: the Kubernetes HPA algorithm (default: ${DEFAULT-VALUE}).")
    String autoscalerName;

    @Mixin
    AutoscaleOptions autoscale;

    @OptionGroup.In(OptionGroup.TIMING)
    @Option(names = "--time-scale", defaultValue = "1",
            description = "The fleet's --time-scale: periods and windows are in its model seconds, which pass this many "
                    + "times faster than wall seconds (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--duration", paramLabel = "S",
            description = "Stop after this many model seconds (default: run until interrupted).")
    Double durationS;

    @OptionGroup.In(OptionGroup.CLIENT)
    @Option(names = "--api-key", description = "Bearer token for the fleet's admin routes.")
    String apiKey;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--timeline-file", paramLabel = "FILE",
            description = "Write the replicas over time as JSON ({\"infersim_replicas\": {time_s, ready, desired}}) on exit.")
    Path timelineFile;

    private volatile boolean stopRequested;

    @Override
    public void run() {
        ConfigException.check(timeScale > 0 && Double.isFinite(timeScale), "--time-scale must be > 0, got %s", timeScale);
        ConfigException.check(durationS == null || (durationS > 0 && Double.isFinite(durationS)),
                "--duration must be > 0 s, got %s", durationS);
        Autoscaler autoscaler = autoscale.autoscaler(autoscalerName);
        checkFleetUrl();
        LiveFleet fleet = new LiveFleet(fleetUrl, apiKey, Duration.ofSeconds(10));
        PrintStream out = System.out;
        try {
            fleet.describe();
        } catch (IOException | IllegalArgumentException e) {
            throw new ConfigException("--fleet: cannot read " + fleetUrl + "/admin/replicas: " + why(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        ReplicaSeries series = new ReplicaSeries();
        try (InterruptGuard guard = new InterruptGuard(() -> stopRequested = true)) {
            loop(autoscaler, fleet, series, out);
            writeTimeline(series, out);
        }
    }

    private void checkFleetUrl() {
        URI uri;
        try {
            uri = new URI(fleetUrl);
        } catch (URISyntaxException e) {
            throw new ConfigException("--fleet: expected http://HOST:PORT, got '" + fleetUrl + "'", e);
        }
        ConfigException.check(("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null,
                "--fleet: expected http://HOST:PORT, got '%s'", fleetUrl);
    }

    private void loop(Autoscaler autoscaler, LiveFleet fleet, ReplicaSeries series, PrintStream out) {
        long period = autoscaler.syncPeriodNanos();
        long endModelNanos = durationS == null ? Long.MAX_VALUE : AutoscaleOptions.nanos(durationS);
        long startWall = System.nanoTime();
        recordNow(fleet, autoscaler, series, 0);
        for (long k = 1; !stopRequested && k * period <= endModelNanos; k++) {
            long modelNanos = k * period;
            long wakeWall = startWall + (long) (modelNanos / timeScale);
            for (long wait = wakeWall - System.nanoTime(); wait > 0 && !stopRequested; wait = wakeWall - System.nanoTime()) {
                LockSupport.parkNanos(Math.min(wait, 50_000_000L));
            }
            if (stopRequested) {
                break;
            }
            sync(autoscaler, fleet, series, modelNanos, out);
        }
    }

    private void sync(Autoscaler autoscaler, LiveFleet fleet, ReplicaSeries series, long modelNanos, PrintStream out) {
        try {
            LiveFleet.Snapshot seen = fleet.observe(autoscaler.metric());
            FleetObservation o = seen.observation();
            int desired = autoscaler.sync(modelNanos, o);
            if (desired != o.currentReplicas()) {
                fleet.scaleTo(desired);
            }
            series.record(modelNanos, seen.ready(), desired);
            out.printf(Locale.ROOT, "t=%.1fs replicas=%d ready=%d %s mean=%s over %d -> %d%s: %s%n", modelNanos / 1e9,
                    o.currentReplicas(), seen.ready(), autoscaler.metric().flagName(), mean(o.metricValues()),
                    o.metricValues().length, desired, seen.unreadable() > 0 ? " (" + seen.unreadable() + " unreadable)" : "",
                    autoscaler.lastReason());
        } catch (IOException e) {
            // As the HPA controller does when it cannot read its metrics: report, leave the scale alone, try next sync.
            out.printf(Locale.ROOT, "t=%.1fs skipped: %s%n", modelNanos / 1e9, why(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopRequested = true;
        }
        out.flush();
    }

    private static void recordNow(LiveFleet fleet, Autoscaler autoscaler, ReplicaSeries series, long modelNanos) {
        try {
            LiveFleet.Snapshot seen = fleet.observe(autoscaler.metric());
            series.record(modelNanos, seen.ready(), seen.observation().currentReplicas());
        } catch (IOException e) {
            throw new ConfigException("--fleet: cannot read the fleet: " + why(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A failure in words; a refused connection carries no message of its own. */
    private static String why(Exception e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static String mean(double[] values) {
        if (values.length == 0) {
            return "n/a";
        }
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return String.format(Locale.ROOT, "%.3f", sum / values.length);
    }

    private void writeTimeline(ReplicaSeries series, PrintStream out) {
        if (timelineFile == null) {
            return;
        }
        try {
            ResultJson.write(timelineFile, new TimelineFile(autoscalerName, series.points()));
        } catch (ConfigException e) {
            throw new ConfigException("--timeline-file: " + e.getMessage(), e);
        }
        out.println("Replica timeline written to " + timelineFile);
    }

    /** The {@code --timeline-file}: the autoscaler and the fleet's ready and desired replicas over time. */
    record TimelineFile(@JsonProperty("infersim_autoscaler") String autoscaler,
                        @JsonProperty("infersim_replicas") ReplicaSeries.Points replicas) {
    }
}
