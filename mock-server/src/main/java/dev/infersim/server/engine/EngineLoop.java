package dev.infersim.server.engine;

import dev.infersim.common.ConfigException;
import dev.infersim.common.NanoClock;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.engine.StepOutcome;
import dev.infersim.engine.StepPlan;
import dev.infersim.server.config.KvEventsConfig;
import dev.infersim.server.kv.EngineKvEvents;
import dev.infersim.server.observe.LoraRequestStates;
import dev.infersim.server.observe.ServerMetrics;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives one {@link EngineCore} on the real clock from a dedicated platform thread (never an event loop):
 * <pre>
 *   drain inbox (submits, aborts, prefix-cache resets) -> plan = planStep(t) -> sleep until wall(plan.end)
 *   -> completeStep -> hand tokens to each connection's event loop (one task per event loop per step)
 *   -> t = plan.end -> repeat; park when idle.
 * </pre>
 * Deadlines are absolute: step k ends at model time t_k = t_{k-1} + duration_k, and the wall deadline is
 * {@link ModelClock#toWall}(t_k), so lateness in one step does not shift later ones (no drift). The thread parks until
 * {@value #SPIN_NANOS} ns before a deadline, then spins; on SCHED_FIFO it spins the last
 * {@value RealtimePriority#SPIN_NANOS} ns, and never more than half the wait.
 *
 * <p>Admission follows the simulator's rule: a request is in a step if it arrived at or before the step's planned
 * start, whenever the engine thread happens to plan it. Arrival is stamped when the request is handed over (after
 * parsing and tokenizing, as vLLM stamps it when the request reaches its engine), and stamp and hand-over form one
 * window that the engine thread waits out before planning ({@link #admitThrough}), so a request stamped just before a
 * step starts can never miss it. The model-time timeline is then a function of the arrival stamps alone, not of how
 * late the engine thread runs: replaying the stamps through the simulator gives the same timeline.
 *
 * <p>Between two steps the thread also carries out what other threads asked: prefix-cache resets, sleeps and wake-ups
 * ({@link EngineCommands}) and LoRA adapter changes ({@link EngineLoras}). With a KV connector ({@link KvTransferConnector}) it
 * holds the blocks of finished prefills ({@code do_remote_decode}) for their decode sides ({@link KvHolds}) and, while
 * the engine waits only for remote KV, sleeps until the first arrives, then starts the step that takes it in exactly
 * then.
 *
 * <p>What the thread does for one request is guarded: an exception there fails that request (its client gets an error,
 * its truth row finish_reason {@code error}) and the engine serves on. An exception outside any one request's work (the
 * engine model's own step) stops the engine as vLLM's EngineCore dies: every request it held fails, later ones are
 * refused with 500 and {@code /health} answers 503 ({@link #deathCause}).
 */
public final class EngineLoop implements Runnable {
    /** Spin this long before a deadline: parkNanos wakes up to ~100 us late on Linux. */
    static final long SPIN_NANOS = 200_000;

    private final EngineCore engine;
    private final int rank;
    private final ModelClock clock;
    private final NanoClock wall;
    private final ServerMetrics metrics;
    private final ConcurrentLinkedQueue<Choice> submits = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Choice> aborts = new ConcurrentLinkedQueue<>();
    private final EngineLoras loras;
    /** Prefix-cache resets, sleeps and wake-ups, done between two steps. */
    private final EngineCommands commands;
    private final AtomicInteger unscheduled = new AtomicInteger();
    /** Sequences reserved and not yet finished: waiting ones plus those the engine runs (or has preempted). */
    private final AtomicInteger unfinished = new AtomicInteger();
    /** Submissions between their arrival stamp and their hand-over. */
    private final AtomicInteger stamping = new AtomicInteger();
    private final AtomicBoolean sleeping = new AtomicBoolean();
    private final ArrayDeque<Choice> arrived = new ArrayDeque<>();
    private final Set<Choice> live = new HashSet<>();
    private final List<EventLoopBatch> touched = new ArrayList<>();
    private final Thread thread;
    private final boolean realtime;
    /** Completed by the thread once it runs: null, or why it could not start (no real-time class, no KV-event socket). */
    private final CompletableFuture<String> started = new CompletableFuture<>();
    private volatile boolean stopping;
    /** Set once the thread has stopped taking work: a reset asked for later is answered false at once. */
    private volatile boolean exited;
    /** Why the engine stopped, when something outside one request's work threw; null while it lives. */
    private volatile Throwable died;
    /** Engine thread: choices whose own work threw in this step, aborted once it is over. */
    private final ArrayList<Choice> failing = new ArrayList<>();
    private final EngineKvEvents kvEvents = new EngineKvEvents();
    private long cursorNanos;
    /** The KV connector; null without one. Its notices (a decode side read a hold, or renews its lease) come in here. */
    private final KvTransferConnector kv;
    private final ConcurrentLinkedQueue<KvTransferConnector.Notice> kvNotices = new ConcurrentLinkedQueue<>();
    /** Engine thread: the blocks of finished prefills held for decode sides. */
    private final KvHolds holds;

    public EngineLoop(EngineCore engine, int rank, ModelClock clock, ServerMetrics metrics, String name, boolean realtime,
               LoraRequestStates loraStates, KvTransferConnector kv) {
        this.kv = kv;
        this.holds = new KvHolds(engine, rank, clock, kv);
        this.commands = new EngineCommands(engine, clock, kvEvents::flush, this::abortLive);
        this.engine = engine;
        this.loras = new EngineLoras(rank, loraStates);
        this.rank = rank;
        this.realtime = realtime;
        this.clock = clock;
        this.wall = clock.wall();
        this.metrics = metrics;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
        // Step deadlines compete with busy event loops for the cores; where the JVM maps Java priorities to OS ones
        // (Linux: -XX:ThreadPriorityPolicy=1, as root) the engine thread then wakes closer to its deadlines.
        // Without that flag Linux JVMs ignore thread priorities.
        thread.setPriority(Thread.MAX_PRIORITY);
    }

    /** Starts the thread; throws {@link ConfigException} when SCHED_FIFO was refused or the KV-event socket failed. */
    public void start() {
        metrics.snapshot(engine, 0);
        thread.start();
        String refused = started.join();
        if (refused != null) {
            throw new ConfigException(refused);
        }
    }

    /**
     * Publish this engine's KV-cache events ({@code rank}: its data-parallel rank, null without data parallelism;
     * {@code replicaOffset}: the port offset of its replica's first engine where the publishers bind).
     */
    public void publishKvEvents(KvEventsConfig config, Integer rank, int replicaOffset) {
        kvEvents.configure(config, rank, replicaOffset);
    }

    /** Sets the topic of this engine's KV events, once its server knows the port it listens on. */
    public void kvEventsTopic(String topic) {
        kvEvents.topic(topic);
    }

    /** This engine's data-parallel rank (0 without data parallelism). */
    public int rank() {
        return rank;
    }

    /** Sequences reserved but not yet scheduled: what vLLM's front end counts as this engine's waiting. */
    public int unscheduled() {
        return unscheduled.get();
    }

    /**
     * Why this engine stopped, or null while it lives. A submission that finds it set after handing its choices over
     * must answer for itself: the thread that would have failed them may be gone.
     */
    public Throwable deathCause() {
        return died;
    }

    /** Sequences scheduled and not finished: this engine's running, as its front end counts them. */
    public int scheduled() {
        return unfinished.get() - unscheduled.get();
    }

    /**
     * Event loop: stamps the arrival of {@code choices}, whose waiting slots {@link #reserve} took, with the model time
     * now and hands them to the engine thread.
     */
    public void submit(Choice[] choices) {
        stamping.incrementAndGet();
        try {
            long arrivalNanos = clock.modelNow();
            for (Choice c : choices) {
                c.arrive(arrivalNanos);
                loras.arrived(c.request);
                submits.offer(c);
            }
        } finally {
            stamping.decrementAndGet();
        }
        wake();
    }

    /** Event loop: reserves {@code n} waiting slots; false when more than {@code max} would wait (the caller answers 429). */
    public boolean reserve(int n, int max) {
        while (true) {
            int w = unscheduled.get();
            if (w + n > max) {
                return false;
            }
            if (unscheduled.compareAndSet(w, w + n)) {
                unfinished.addAndGet(n);
                return true;
            }
        }
    }

    /** Any thread: the LoRA adapter with this id was registered; the engine reads it into host memory. */
    public void registerLora(int id) {
        loras.changed(id, true);
        wake();
    }

    /** Any thread: the LoRA adapter with this id was unloaded; the engine frees its slot. */
    public void unloadLora(int id) {
        loras.changed(id, false);
        wake();
    }

    /** Any thread (the side channel): a decode side has read, or renews its lease on, a held prefill's blocks. */
    void kvNotice(KvTransferConnector.Notice notice) {
        kvNotices.offer(notice);
        wake();
    }

    /** Any thread: stop a choice now (client gone) and free its KV blocks. */
    public void abort(Choice c) {
        aborts.offer(c);
        wake();
    }

    /**
     * Any thread: resets this engine's prefix cache between two steps (vLLM's {@code POST /reset_prefix_cache});
     * completes with whether it did (see {@link EngineCore#resetPrefixCache}).
     */
    public CompletableFuture<Boolean> resetPrefixCache(boolean preemptRunning) {
        CompletableFuture<Boolean> done = commands.resetPrefixCache(preemptRunning);
        if (exited) {
            commands.refuseAll();
        }
        wake();
        return done;
    }

    /**
     * Any thread: puts the engine to sleep as vLLM's {@code EngineCore.sleep(level, mode)}: scheduling pauses, in-flight
     * requests are aborted ({@code abort}), finished first ({@code wait}) or frozen ({@code keep}), and at level 1 or
     * more the prefix cache is emptied (the KV cache is discarded). Completes once asleep.
     */
    public CompletableFuture<Long> sleep(String mode, boolean clearCache) {
        CompletableFuture<Long> done = commands.sleep(mode, clearCache);
        if (exited) {
            commands.refuseAll();
        }
        LockSupport.unpark(thread);
        return done;
    }

    /** Any thread: resumes scheduling once {@code reloadNanos} of model time (the weights' reload) have passed. */
    public CompletableFuture<Long> wakeUp(long reloadNanos) {
        CompletableFuture<Long> done = commands.wakeUp(reloadNanos);
        if (exited) {
            commands.refuseAll();
        }
        LockSupport.unpark(thread);
        return done;
    }

    /**
     * Any thread ({@code /admin/config}): the engine's GPU runs {@code speedFactor} times as fast as its profile and,
     * under fixed timing, draws latencies from {@code fixed}, from the step after this one.
     */
    public void changeTiming(double speedFactor, dev.infersim.engine.FixedTiming fixed) {
        commands.changeTiming(speedFactor, fixed);
        wake();
    }

    /** Stops the thread; requests still in the engine finish with {@code abort} and their connections are told. */
    public void stop() throws InterruptedException {
        stopping = true;
        LockSupport.unpark(thread);
        thread.join(10_000);
    }

    private void wake() {
        if (sleeping.get()) {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public void run() {
        if (realtime) {
            try {
                RealtimePriority.applyToCurrentThread(RealtimePriority.PRIORITY);
            } catch (IllegalStateException e) {
                started.complete("--realtime-engine: " + e.getMessage());
                return;
            }
        }
        String refused = kvEvents.open(engine);
        started.complete(refused);
        if (refused != null) {
            return;
        }
        try {
            serve();
        } catch (Throwable t) {
            die(t);
        } finally {
            exited = true;
            commands.refuseAll();
            kvEvents.close();
        }
    }

    /** Steps until stopped, then aborts what is left. */
    private void serve() {
        while (!stopping) {
            drainInbox();
            holds.expire(clock.modelNow());
            commands.applySleeps();
            if (commands.paused()) {
                parkWhilePaused();
                continue;
            }
            if (engine.isIdle() && arrived.isEmpty()) {
                metrics.snapshot(engine, 0);
                sleepUntilWork();
                continue;
            }
            if (engine.isIdle()) {
                cursorNanos = Math.max(cursorNanos, earliestArrival());
            }
            cursorNanos = Math.max(cursorNanos, commands.resumeAtNanos());
            admitThrough(cursorNanos);
            StepPlan plan = engine.planStep(cursorNanos);
            if (plan == null) {
                if (!arrived.isEmpty()) {
                    cursorNanos = Math.max(cursorNanos, earliestArrival());
                } else if (engine.kvLoadingCount() > 0) {
                    cursorNanos = Math.max(cursorNanos, awaitKvOrArrival(engine.nextKvArrivalNanos()));
                } else {
                    LockSupport.parkNanos(1_000_000); // nothing schedulable now; never expected with up-front rejection
                    cursorNanos = Math.max(cursorNanos, clock.modelNow());
                }
                continue;
            }
            recordPlanned(plan);
            loras.reportRunning(engine);
            long deadline = clock.toWall(plan.endNanos());
            wall.sleepUntil(deadline, spinNanos(deadline));
            long lag = wall.nanoTime() - deadline;
            StepOutcome out = engine.completeStep(plan);
            cursorNanos = plan.endNanos();
            metrics.recordStep(plan.tokens(), plan.durationNanos(), lag);
            // before the tokens go out: a client that has its answer then finds /metrics counting it
            metrics.snapshot(engine, arrived.size());
            deliver(out);
            abortFailing();
            kvEvents.flush();
        }
        abortAll();
    }

    /**
     * Something outside one request's work threw: the engine's state is unknown, so it is asked nothing more. Every
     * request it held or had been handed fails at once, without it; later submissions see {@link #deathCause}.
     */
    private void die(Throwable t) {
        died = t;
        System.err.println("infersim: engine " + thread.getName() + " stopped: " + t);
        t.printStackTrace();
        Choice c;
        while ((c = submits.poll()) != null) {
            live.add(c);
        }
        String why = "the engine has stopped";
        for (Choice dead : live) {
            dead.fail(why);
            dead.markFinished();
            touch(dead.batch).add(dead);
        }
        live.clear();
        arrived.clear();
        flushTouched();
    }

    /** Engine thread: {@code c}'s own work threw; it is aborted once the step is over and its client gets the error. */
    private void failLater(Choice c, RuntimeException e) {
        c.fail("the engine failed this request" + failureNote(c, e));
        failing.add(c);
    }

    /** What the client is told of {@code e}: that it was injected; anything else goes to stderr, the client told nothing. */
    private String failureNote(Choice c, RuntimeException e) {
        if (e instanceof ExchangeFault.Injected) {
            return " (injected fault)";
        }
        System.err.println("infersim: request " + c.exchange.requestId() + " failed on engine " + thread.getName() + ": " + e);
        e.printStackTrace();
        return "";
    }

    private void abortFailing() {
        for (int i = 0; i < failing.size(); i++) {
            abortChoice(failing.get(i), FinishReason.ABORT);
        }
        failing.clear();
        flushTouched();
    }

    private void drainInbox() {
        Choice c;
        while ((c = submits.poll()) != null) {
            arrived.add(c);
            live.add(c);
        }
        KvTransferConnector.Notice notice;
        while ((notice = kvNotices.poll()) != null) {
            holds.apply(notice);
        }
        while ((c = aborts.poll()) != null) {
            abortChoice(c, FinishReason.ABORT);
        }
        loras.apply(engine);
        flushTouched();
        commands.applyResets(cursorNanos);
        commands.applyTiming();
    }

    private void abortChoice(Choice c, FinishReason reason) {
        if (!live.remove(c)) {
            return;
        }
        EngineRequest r = c.request;
        if (arrived.remove(c)) {
            if (kv != null && c.remotePrefill != null) {
                kv.pullDone(c, rank); // never reached the engine: its prefill's blocks may go
            }
            unscheduled.decrementAndGet();
        } else {
            boolean wasWaiting = r.firstScheduledNanos() < 0;
            if (!engine.abort(r, reason, cursorNanos)) {
                return;
            }
            if (wasWaiting) {
                unscheduled.decrementAndGet();
            }
        }
        retire(c);
    }

    /** {@code c} left the engine, finished or aborted: counted, its adapter's count updated, its event loop told. */
    private void retire(Choice c) {
        metrics.recordFinish(c.request, c.index, c.exchange.choiceCount());
        unfinished.decrementAndGet();
        loras.finished(c.request);
        c.markFinished();
        touch(c.batch).add(c);
    }

    /**
     * Sleeps until remote KV arrives at model time {@code kvArrivalNanos} or a request is handed over, whichever is
     * first; returns the model time the next step starts at: the KV's arrival, or that request's if earlier.
     */
    private long awaitKvOrArrival(long kvArrivalNanos) {
        metrics.snapshot(engine, arrived.size()); // the pulls show as waiting meanwhile, as vLLM's WAITING_FOR_REMOTE_KVS
        sleeping.set(true);
        long remaining = clock.toWall(kvArrivalNanos) - wall.nanoTime();
        if (remaining > 0 && submits.isEmpty() && aborts.isEmpty() && !commands.pending() && !stopping) {
            LockSupport.parkNanos(this, remaining);
        }
        sleeping.set(false);
        drainInbox();
        return arrived.isEmpty() ? kvArrivalNanos : Math.min(kvArrivalNanos, earliestArrival());
    }

    private long earliestArrival() {
        long min = Long.MAX_VALUE;
        for (Choice c : arrived) {
            min = Math.min(min, c.request.arrivalNanos());
        }
        return min;
    }

    /**
     * Hands the engine every request that arrived at or before {@code startNanos}, the start of the step about to be
     * planned. Waits first until model time has passed the start and no submission is between stamp and hand-over:
     * any stamp taken after that is later than the start, and every earlier one is in the inbox.
     */
    private void admitThrough(long startNanos) {
        clock.awaitPast(startNanos);
        while (stamping.get() != 0) {
            Thread.yield(); // a submitter holds the window for a clock read and a few queue offers
        }
        drainInbox();
        Iterator<Choice> it = arrived.iterator();
        while (it.hasNext() && !commands.pausing()) {
            Choice c = it.next();
            if (c.request.arrivalNanos() <= startNanos) {
                it.remove();
                try {
                    engine.submit(c.request);
                } catch (RuntimeException e) {
                    refuse(c, e);
                }
            }
        }
    }

    /** The engine would not take {@code c} (it threw): the request fails, never having reached the engine. */
    private void refuse(Choice c, RuntimeException e) {
        c.fail("the engine refused this request" + failureNote(c, e));
        live.remove(c);
        if (kv != null && c.remotePrefill != null) {
            kv.pullDone(c, rank);
        }
        unscheduled.decrementAndGet();
        retire(c);
    }

    private void recordPlanned(StepPlan plan) {
        for (int i = 0; i < plan.admittedCount(); i++) {
            unscheduled.decrementAndGet();
        }
        for (int i = 0; i < plan.preemptedCount(); i++) {
            ((Choice) plan.preempted(i).attachment()).recordPreemption(plan.startNanos());
        }
        // Before the step ends: a stop string completed by the token this step may produce ends the request with it.
        for (int i = 0; i < plan.size(); i++) {
            EngineRequest r = plan.request(i);
            Choice c = (Choice) r.attachment();
            try {
                c.scanForStop(r.outputTokens());
            } catch (RuntimeException e) {
                failLater(c, e);
            }
        }
    }

    private void deliver(StepOutcome out) {
        long end = out.endNanos();
        for (int i = 0; i < out.tokenCount(); i++) {
            EngineRequest r = out.tokenRequest(i);
            Choice c = (Choice) r.attachment();
            try {
                c.exchange.engineFault(r.outputTokens());
                if (c.lastTokenNanos < 0) {
                    metrics.recordFirstToken(r, end);
                } else {
                    metrics.recordInterToken(end - c.lastTokenNanos);
                }
                c.recordToken(end);
                if (c.exchange.wantsTokens()) {
                    touch(c.batch).add(c);
                }
            } catch (RuntimeException e) {
                failLater(c, e);
            }
        }
        for (int i = 0; i < out.finishedCount(); i++) {
            EngineRequest r = out.finished(i);
            Choice c = (Choice) r.attachment();
            if (r.isKvHeld()) {
                try {
                    holds.hold(c, end);
                } catch (RuntimeException e) {
                    c.fail("the engine failed to hold this request's KV blocks" + failureNote(c, e));
                }
            }
            live.remove(c);
            retire(c);
        }
        flushTouched();
    }

    private EventLoopBatch touch(EventLoopBatch b) {
        if (!b.touched) {
            b.touched = true;
            touched.add(b);
        }
        return b;
    }

    private void flushTouched() {
        for (int i = 0; i < touched.size(); i++) {
            EventLoopBatch b = touched.get(i);
            b.touched = false;
            b.schedule();
        }
        touched.clear();
    }

    private void parkWhilePaused() {
        metrics.snapshot(engine, arrived.size()); // requests taken in while asleep show as waiting
        sleeping.set(true);
        if (commands.paused() && !commands.pending() && submits.isEmpty() && aborts.isEmpty() && !stopping) {
            LockSupport.park(this);
        }
        sleeping.set(false);
    }

    /** The spin before {@code deadline}: {@value #SPIN_NANOS} ns (on SCHED_FIFO more), never more than half the wait. */
    private long spinNanos(long deadline) {
        return Math.min(realtime ? RealtimePriority.SPIN_NANOS : SPIN_NANOS, (deadline - wall.nanoTime()) / 2);
    }

    private void sleepUntilWork() {
        sleeping.set(true);
        if (submits.isEmpty() && aborts.isEmpty() && !commands.pending() && kvNotices.isEmpty() && !stopping) {
            long leaseEnd = holds.nextLeaseEnd();
            if (leaseEnd == Long.MAX_VALUE) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, Math.max(1, clock.toWall(leaseEnd) - wall.nanoTime()));
            }
        }
        sleeping.set(false);
    }

    private void abortAll() {
        drainInbox();
        abortLive();
        metrics.snapshot(engine, 0);
    }

    /** Aborts every request this thread holds (in the engine or handed over) and hands the finishes out. */
    private void abortLive() {
        for (Choice c : new ArrayList<>(live)) {
            abortChoice(c, FinishReason.ABORT);
        }
        flushTouched();
    }
}
