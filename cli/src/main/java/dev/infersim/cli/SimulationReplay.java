package dev.infersim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.server.observe.Dashboard;
import dev.infersim.sim.ReplicaSeries;
import dev.infersim.sim.SimulationResult;
import dev.infersim.sim.Timeline;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongFunction;

/**
 * A finished simulation played back on the live dashboard's page, {@code speed} model seconds per wall second, each
 * viewer from the start. The engine state comes from the run's timeline (the whole fleet: running, waiting, KV usage,
 * tokens in the step in flight, arrivals and completions); the TTFT and inter-token histograms and Little's law from the
 * per-request rows, each counted once its token's model time has passed; with an autoscaler, the ready and desired
 * replica counts. Snapshots have the live feed's fields; the step time is the mean duration of the steps in flight at
 * the timeline's samples over the last ten model seconds: a mean over time, which weighs a long prefill step by its
 * length, where the live feed's is a mean per step.
 */
final class SimulationReplay {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long WINDOW_NANOS = 10_000_000_000L;

    private final Timeline timeline;
    private final double speed;
    private final double[] ttftBounds = Dashboard.ttftBucketsSeconds();
    private final double[] itlBounds = Dashboard.itlBucketsSeconds();
    /** (time, value) events sorted by time: first tokens with their TTFT, tokens with their gap, ends with E2EL. */
    private final long[][] firstTokens;
    private final long[][] gaps;
    private final long[][] ends;
    private final String label;
    private final ReplicaSeries replicaSeries;

    /** @param detail the run's per-request rows with chunk gaps ({@code RequestLogWriter(file, true)}) */
    SimulationReplay(SimulationResult result, Path detail, double speed) {
        this.timeline = result.timeline();
        this.replicaSeries = result.replicaSeries();
        this.speed = speed;
        boolean fleet = result.replicas().length > 1 || replicaSeries.size() > 1;
        this.label = fleet ? "all replicas" : "engine";
        List<long[]> first = new ArrayList<>();
        List<long[]> gap = new ArrayList<>();
        List<long[]> end = new ArrayList<>();
        new RequestLogReader(detail).forEach(true, row -> {
            RequestRecord r = row.record();
            if (!r.succeeded()) {
                return;
            }
            first.add(new long[] {r.firstTokenNanos(), r.ttftNanos()});
            end.add(new long[] {r.lastTokenNanos(), r.lastTokenNanos() - r.scheduledNanos()});
            long t = r.firstTokenNanos();
            for (long g : row.chunkGapNanos()) {
                t += g;
                gap.add(new long[] {t, g});
            }
        });
        firstTokens = sorted(first);
        gaps = sorted(gap);
        ends = sorted(end);
    }

    private static long[][] sorted(List<long[]> events) {
        long[][] a = events.toArray(long[][]::new);
        Arrays.sort(a, (x, y) -> Long.compare(x[0], y[0]));
        return a;
    }

    /** A new viewer's feed: from its first call on, model time runs {@code speed} times the wall clock; null at the end. */
    LongFunction<String> viewer() {
        long[] startWall = {Long.MIN_VALUE};
        boolean[] shownEnd = {false};
        return now -> {
            if (startWall[0] == Long.MIN_VALUE) {
                startWall[0] = now;
            }
            long model = (long) ((now - startWall[0]) * speed);
            long last = endNanos();
            if (model > last) {
                if (shownEnd[0]) {
                    return null;
                }
                shownEnd[0] = true; // the final state once, then the end
                model = last;
            }
            return snapshotAt(model);
        };
    }

    /** The replay's last instant: the later of the timeline's last sample and the last request's end. */
    long endNanos() {
        long sampled = timeline.size() == 0 ? 0 : timeline.timeNanos(timeline.size() - 1);
        return Math.max(sampled, ends.length == 0 ? 0 : ends[ends.length - 1][0]);
    }

    /** The snapshot at model time {@code nanos}, in the live feed's format. */
    String snapshotAt(long nanos) {
        int k = lastSampleAtOrBefore(nanos);
        ObjectNode root = JSON.createObjectNode();
        root.put("source", "simulation replay");
        root.put("time_scale", speed);
        root.put("model_time_s", nanos / 1e9);
        if (replicaSeries.size() > 0) {
            root.put("ready_replicas", replicaSeries.readyAt(nanos));
            root.put("desired_replicas", replicaSeries.desiredAt(nanos));
        }
        ArrayNode list = root.putArray("replicas");
        if (k < 0) {
            return root.toString();
        }
        int j = Math.max(0, lastSampleAtOrBefore(nanos - WINDOW_NANOS));
        ObjectNode r = list.addObject();
        r.put("replica", 0);
        r.put("label", label);
        boolean over = nanos >= endNanos(); // the timeline's samples may stop short of the last completion
        r.put("running", over ? 0 : timeline.running(k));
        r.put("waiting", over ? 0 : timeline.waiting(k));
        r.put("kv_cache_usage", over ? 0 : timeline.kvUsage(k));
        r.put("finished", upTo(ends, nanos));
        double seconds = (timeline.timeNanos(k) - timeline.timeNanos(j)) / 1e9;
        double arrivalRate = seconds > 0 ? (timeline.arrivals(k) - timeline.arrivals(j)) / seconds : 0;
        long finishedInWindow = upTo(ends, timeline.timeNanos(k)) - upTo(ends, timeline.timeNanos(j));
        r.put("arrival_rate", arrivalRate);
        r.put("completion_rate", seconds > 0 ? finishedInWindow / seconds : 0);
        r.put("tokens_per_step", over ? 0 : timeline.batchTokens(k));
        r.put("step_ms", over ? 0 : meanStepMs(j, k));
        double present = 0;
        for (int i = j; i <= k; i++) {
            present += timeline.backlog(i);
        }
        double w = meanValue(ends, timeline.timeNanos(j), timeline.timeNanos(k)) / 1e9;
        ObjectNode little = r.putObject("little");
        little.put("L", present / (k - j + 1));
        little.put("lambda", arrivalRate);
        little.put("W_s", w);
        little.put("lambda_W", arrivalRate * w);
        histogram(r.putObject("ttft"), ttftBounds, firstTokens, nanos);
        histogram(r.putObject("itl"), itlBounds, gaps, nanos);
        return root.toString();
    }

    /** Mean duration of the steps in flight at samples j..k (those where one ran), ms; 0 when none ran. */
    private double meanStepMs(int j, int k) {
        long sum = 0;
        int n = 0;
        for (int i = j; i <= k; i++) {
            if (timeline.stepNanos(i) > 0) {
                sum += timeline.stepNanos(i);
                n++;
            }
        }
        return n == 0 ? 0 : sum / 1e6 / n;
    }

    private int lastSampleAtOrBefore(long nanos) {
        int lo = 0;
        int hi = timeline.size() - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (timeline.timeNanos(mid) <= nanos) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Mean value of the events in (from, to]; 0 when none. */
    private static double meanValue(long[][] events, long from, long to) {
        double sum = 0;
        int n = 0;
        for (int i = upTo(events, from); i < events.length && events[i][0] <= to; i++) {
            sum += events[i][1];
            n++;
        }
        return n == 0 ? 0 : sum / n;
    }

    /** Index of the first event after {@code nanos}. */
    private static int upTo(long[][] events, long nanos) {
        int lo = 0;
        int hi = events.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (events[mid][0] <= nanos) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static void histogram(ObjectNode out, double[] bounds, long[][] events, long nanos) {
        long[] counts = new long[bounds.length + 1];
        for (int i = 0, end = upTo(events, nanos); i < end; i++) {
            double seconds = events[i][1] / 1e9;
            int b = 0;
            while (b < bounds.length && seconds > bounds[b]) {
                b++;
            }
            counts[b]++;
        }
        ArrayNode le = out.putArray("le");
        for (double b : bounds) {
            le.add(b);
        }
        ArrayNode count = out.putArray("count");
        for (long c : counts) {
            count.add(c);
        }
    }
}
