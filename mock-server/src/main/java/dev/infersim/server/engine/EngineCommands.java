package dev.infersim.server.engine;

import dev.infersim.engine.EngineCore;

import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What an operator asks of one engine, carried out by its engine thread between two steps and answered by a future:
 * vLLM's {@code POST /reset_prefix_cache} ({@link EngineCore#resetPrefixCache}) and sleep mode, as
 * {@code EngineCore.sleep(level, mode)} and {@code wake_up} do it. A sleep pauses scheduling: requests are still taken
 * in but no step runs until a wake-up; in-flight requests are aborted ({@code abort}), finished first ({@code wait}:
 * no new request is scheduled meanwhile) or frozen ({@code keep}), and at level 1 or more the prefix cache is emptied
 * (the KV cache is discarded). A wake-up lets steps start again once the weights' reload has passed in model time.
 */
final class EngineCommands {
    private final EngineCore engine;
    private final ModelClock clock;
    /** Publishes the KV events of a cache reset at once (AllBlocksCleared), not with the next step's. */
    private final Runnable publish;
    /** Aborts every request the engine thread holds and hands the finishes to their event loops. */
    private final Runnable abortLive;
    private final ConcurrentLinkedQueue<PrefixCacheReset> resets = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<SleepCommand> sleeps = new ConcurrentLinkedQueue<>();
    /** The latest timing asked ({@code /admin/config}), waiting for the engine thread; null when none is. */
    private final java.util.concurrent.atomic.AtomicReference<TimingChange> timing = new java.util.concurrent.atomic.AtomicReference<>();
    /** Scheduling paused by a sleep: requests are taken in but no step runs until a wake-up. */
    private volatile boolean paused;
    /**
     * Sleeps in mode wait: no new request is scheduled, and the engine pauses once the running ones finish. Every one
     * asked is answered, together, when the engine pauses (or a wake-up comes first).
     */
    private final ArrayList<SleepCommand> pausing = new ArrayList<>();
    /** Model time before which no step starts: the end of the last wake-up's reload. */
    private long resumeAtNanos;

    EngineCommands(EngineCore engine, ModelClock clock, Runnable publish, Runnable abortLive) {
        this.engine = engine;
        this.clock = clock;
        this.publish = publish;
        this.abortLive = abortLive;
    }

    private record PrefixCacheReset(boolean preemptRunning, CompletableFuture<Boolean> done) {
    }

    /** A speed factor and fixed latencies (null under the cost model) for the steps from now on. */
    private record TimingChange(double speedFactor, dev.infersim.engine.FixedTiming fixed) {
    }

    /** Completed with the model time the command took effect at (a wake-up: when steps may start again). */
    private record SleepCommand(boolean sleep, String mode, boolean clearCache, long reloadNanos, CompletableFuture<Long> done) {
    }

    /** Any thread: a prefix-cache reset, completed with whether it did (see {@link EngineCore#resetPrefixCache}). */
    CompletableFuture<Boolean> resetPrefixCache(boolean preemptRunning) {
        PrefixCacheReset reset = new PrefixCacheReset(preemptRunning, new CompletableFuture<>());
        resets.offer(reset);
        return reset.done;
    }

    /** Any thread: a sleep in {@code mode} (abort, wait or keep), completed once asleep. */
    CompletableFuture<Long> sleep(String mode, boolean clearCache) {
        SleepCommand c = new SleepCommand(true, mode, clearCache, 0, new CompletableFuture<>());
        sleeps.offer(c);
        return c.done;
    }

    /** Any thread: resumes scheduling once {@code reloadNanos} of model time (the weights' reload) have passed. */
    CompletableFuture<Long> wakeUp(long reloadNanos) {
        SleepCommand c = new SleepCommand(false, null, false, reloadNanos, new CompletableFuture<>());
        sleeps.offer(c);
        return c.done;
    }

    /** Any thread: the engine times its steps from its next one with these; a later change replaces one not yet applied. */
    void changeTiming(double speedFactor, dev.infersim.engine.FixedTiming fixed) {
        timing.set(new TimingChange(speedFactor, fixed));
    }

    /** Engine thread, between two steps: applies the timing last asked for, if any. */
    void applyTiming() {
        TimingChange change = timing.getAndSet(null);
        if (change != null) {
            engine.setSpeedFactor(change.speedFactor());
            if (change.fixed() != null) {
                engine.setFixedTiming(change.fixed());
            }
        }
    }

    /** Whether a command waits for the engine thread. */
    boolean pending() {
        return !resets.isEmpty() || !sleeps.isEmpty() || timing.get() != null;
    }

    boolean paused() {
        return paused;
    }

    /** A sleep in mode wait is letting the running requests finish: schedule no new one. */
    boolean pausing() {
        return !pausing.isEmpty();
    }

    long resumeAtNanos() {
        return resumeAtNanos;
    }

    /** Engine thread: every reset asked, a running request preempted by one recorded at {@code cursorNanos}. */
    void applyResets(long cursorNanos) {
        PrefixCacheReset reset;
        while ((reset = resets.poll()) != null) {
            boolean done = engine.resetPrefixCache(reset.preemptRunning(),
                    r -> ((Choice) r.attachment()).recordPreemption(cursorNanos));
            publish.run();
            reset.done().complete(done);
        }
    }

    /**
     * Once the engine thread has stopped taking work: what is asked from then on, or was left unanswered, is answered at
     * once: a reset false, a sleep or wake-up with an {@link IllegalStateException}.
     */
    void refuseAll() {
        PrefixCacheReset reset;
        while ((reset = resets.poll()) != null) {
            reset.done().complete(false);
        }
        SleepCommand c;
        while ((c = sleeps.poll()) != null) {
            c.done().completeExceptionally(new IllegalStateException("the engine has stopped"));
        }
        for (SleepCommand waiting : pausing) {
            waiting.done().completeExceptionally(new IllegalStateException("the engine has stopped"));
        }
        pausing.clear();
    }

    /**
     * Engine thread: the sleeps and wake-ups asked, in order. A sleep in mode wait pauses once the engine is idle (at
     * once when it already sleeps); one in mode abort or keep pauses now, and so ends the wait of any before it. A
     * wake-up ends such a wait too: every sleep is answered, whatever follows it.
     */
    void applySleeps() {
        SleepCommand c;
        while ((c = sleeps.poll()) != null) {
            if (!c.sleep()) {
                answerPausing();
                paused = false;
                resumeAtNanos = Math.max(resumeAtNanos, clock.modelNow() + c.reloadNanos());
                c.done().complete(resumeAtNanos);
            } else if (c.mode().equals("wait") && !paused) {
                pausing.add(c);
            } else {
                if (c.mode().equals("abort")) {
                    abortLive.run();
                }
                pausing.add(c);
                pause();
            }
        }
        if (!pausing.isEmpty() && engine.isIdle()) {
            pause();
        }
    }

    /** Pauses scheduling (emptying the prefix cache if a sleep asks it) and answers every sleep waiting for that. */
    private void pause() {
        paused = true;
        boolean clear = false;
        for (SleepCommand c : pausing) {
            clear |= c.clearCache();
        }
        if (clear) {
            engine.resetPrefixCache(false, r -> { });
            publish.run();
        }
        answerPausing();
    }

    private void answerPausing() {
        long now = clock.modelNow();
        for (SleepCommand c : pausing) {
            c.done().complete(now);
        }
        pausing.clear();
    }
}
