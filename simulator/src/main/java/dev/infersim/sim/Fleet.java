package dev.infersim.sim;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.StartupDelay;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;

/**
 * The replicas of a simulation over virtual time, sized by an {@link Autoscaler} or fixed. Three kinds of fleet event
 * exist: a replica's cold start ends (it takes requests from then on), an autoscaler sync (every sync period from
 * the first period on), and the metrics scrape that sync reads, {@code metricsLag} before it (at time 0 at the
 * earliest): the autoscaler sees the fleet as it was then, as one reading a metrics pipeline does. Replicas ready
 * after that scrape have no metric yet. A scale-up starts new replicas that pay the startup
 * delay; a scale-down removes replicas still starting first, then the most recently ready (a ReplicaSet's deletion
 * order), which drain: they take no new requests, finish what they have and are then retired. A replica holds its
 * tensor-parallel GPUs from its start to its retirement (or the end of the run): that is what the GPU-seconds count.
 */
public final class Fleet {
    private final Supplier<EngineCore> engines;
    private final Autoscaler autoscaler;
    private final long startupNanos;
    private final long metricsLagNanos;
    private final List<Replica> everyReplica = new ArrayList<>();
    private final List<Replica> live = new ArrayList<>();
    private final ReplicaSeries series = new ReplicaSeries();
    private Replica[] liveArray;
    private Replica[] routable;
    private final ArrayDeque<Scrape> scrapes = new ArrayDeque<>();
    private long syncs;
    private long scrapesTaken;
    private long lastEventNanos;
    private int nextId;

    /** A fixed fleet: these replicas, all serving from time 0. */
    public static Fleet fixed(Replica[] replicas) {
        return new Fleet(replicas, null, null, StartupDelay.NONE, 0);
    }

    /**
     * @param initial              the replicas at time 0, all ready
     * @param engines              makes the engine of each new replica
     * @param autoscaler           sizes the fleet, or null for a fixed one
     * @param startup              each new replica's cold start
     * @param metricsLagNanos      age of the metrics each sync reads; 0 = the values at the sync
     */
    public Fleet(Replica[] initial, Supplier<EngineCore> engines, Autoscaler autoscaler, StartupDelay startup,
                 long metricsLagNanos) {
        if (initial.length == 0) {
            throw new IllegalArgumentException("a simulation needs at least one replica");
        }
        if (metricsLagNanos < 0) {
            throw new IllegalArgumentException("metrics lag must be >= 0 ns, got " + metricsLagNanos);
        }
        this.engines = engines;
        this.autoscaler = autoscaler;
        this.startupNanos = startup.totalNanos();
        this.metricsLagNanos = metricsLagNanos;
        for (Replica r : initial) {
            everyReplica.add(r);
            live.add(r);
            nextId = Math.max(nextId, r.id() + 1);
        }
        rebuild(0);
    }

    /** Replicas alive now (serving, starting or draining): those that may run steps. */
    public Replica[] live() {
        return liveArray;
    }

    /** Replicas taking new requests now: ready and not draining. Never empty. */
    public Replica[] routable() {
        return routable;
    }

    /** Every replica the run ever had, retired ones included, for their engine counters. */
    public Replica[] everyReplica() {
        return everyReplica.toArray(new Replica[0]);
    }

    /** Time of the next fleet event; {@code Long.MAX_VALUE} for a fixed fleet. */
    public long nextEventNanos() {
        if (autoscaler == null) {
            return Long.MAX_VALUE;
        }
        long next = Math.min(syncNanos(syncs + 1), scrapeNanos(scrapesTaken + 1));
        for (Replica r : liveArray) {
            if (r.readyNanos() > lastEventNanos) {
                next = Math.min(next, r.readyNanos());
            }
        }
        return next;
    }

    /** Time of sync k (k >= 1). */
    private long syncNanos(long k) {
        return k * autoscaler.syncPeriodNanos();
    }

    /** Time of the scrape sync k reads. */
    private long scrapeNanos(long k) {
        return Math.max(0, syncNanos(k) - metricsLagNanos);
    }

    /** Handles every fleet event due at {@code nowNanos}: cold starts ending, then scrapes, then a sync. */
    public void handleEvents(long nowNanos) {
        lastEventNanos = nowNanos;
        while (scrapeNanos(scrapesTaken + 1) <= nowNanos) {
            scrapes.add(scrape(nowNanos));
            scrapesTaken++;
        }
        if (syncNanos(syncs + 1) <= nowNanos) {
            syncs++;
            scaleTo(nowNanos, autoscaler.sync(nowNanos, observe(scrapes.poll())));
        }
        rebuild(nowNanos);
    }

    /** The metric of every replica serving now. */
    private Scrape scrape(long nowNanos) {
        List<Replica> serving = new ArrayList<>();
        for (Replica r : live) {
            if (r.isReady(nowNanos) && !r.isDraining()) {
                serving.add(r);
            }
        }
        double[] values = new double[serving.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = autoscaler.metric().read(serving.get(i).engine());
        }
        return new Scrape(serving.toArray(new Replica[0]), values);
    }

    /** What a sync sees: the scrape's values of the replicas still counted, the others as without metrics. */
    private FleetObservation observe(Scrape scrape) {
        int current = 0;
        for (Replica r : live) {
            current += r.isDraining() ? 0 : 1; // terminating pods are left out of the HPA's count and its metrics
        }
        double[] values = new double[scrape.values.length];
        int reported = 0;
        for (int i = 0; i < values.length; i++) {
            if (!scrape.replicas[i].isDraining()) {
                values[reported++] = scrape.values[i];
            }
        }
        return new FleetObservation(current, Arrays.copyOf(values, reported), current - reported);
    }

    private record Scrape(Replica[] replicas, double[] values) {
    }

    private void scaleTo(long nowNanos, int desired) {
        List<Replica> active = new ArrayList<>();
        for (Replica r : live) {
            if (!r.isDraining()) {
                active.add(r);
            }
        }
        for (int i = active.size(); i < desired; i++) {
            Replica r = new Replica(nextId++, engines.get(), nowNanos, nowNanos + startupNanos);
            everyReplica.add(r);
            live.add(r);
        }
        if (desired < active.size()) {
            // Not ready before ready; among each, the most recently started or ready first.
            active.sort(Comparator.comparing((Replica r) -> r.isReady(nowNanos))
                    .thenComparing(Comparator.comparingLong(Replica::readyNanos).reversed())
                    .thenComparing(Comparator.comparingInt(Replica::id).reversed()));
            for (int i = 0; i < active.size() - desired; i++) {
                Replica r = active.get(i);
                r.drain();
                retireIfDrained(r, nowNanos);
            }
        }
    }

    /** Retires a draining replica once its last request has finished; call after each of its steps. */
    public void stepEnded(Replica replica, long nowNanos) {
        if (replica.isDraining() && retireIfDrained(replica, nowNanos)) {
            rebuild(nowNanos);
        }
    }

    private boolean retireIfDrained(Replica r, long nowNanos) {
        if (!r.engine().isIdle() || r.stepInFlight() != null) {
            return false;
        }
        r.retire(nowNanos);
        live.remove(r);
        return true;
    }

    private void rebuild(long nowNanos) {
        liveArray = live.toArray(new Replica[0]);
        List<Replica> serving = new ArrayList<>();
        int desired = 0;
        for (Replica r : live) {
            if (!r.isDraining()) {
                desired++;
                if (r.isReady(nowNanos)) {
                    serving.add(r);
                }
            }
        }
        routable = serving.toArray(new Replica[0]);
        series.record(nowNanos, routable.length, desired);
    }

    /** GPU-seconds held from each replica's start to its retirement or {@code endNanos}, times its GPUs. */
    public double gpuSeconds(long endNanos) {
        double total = 0;
        for (Replica r : everyReplica) {
            long end = r.retiredNanos() >= 0 ? r.retiredNanos() : endNanos;
            total += (double) Math.max(0, end - r.createdNanos()) * r.engine().deployment().tensorParallelSize();
        }
        return total / 1e9;
    }

    /** The replica counts over time. */
    public ReplicaSeries series() {
        return series;
    }
}
