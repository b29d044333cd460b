package dev.infersim.server;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.engine.StepOutcome;
import dev.infersim.engine.StepPlan;

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
 * {@value #SPIN_NANOS} ns before a deadline, then spins; on SCHED_FIFO it spins the last {@value #REALTIME_SPIN_NANOS}
 * ns, and never more than half the wait.
 *
 * <p>Admission follows the simulator's rule: a request is in a step if it arrived at or before the step's planned
 * start, whenever the engine thread happens to plan it. Arrival is stamped when the request is handed over (after
 * parsing and tokenizing, as vLLM stamps it when the request reaches its engine), and stamp and hand-over form one
 * window that the engine thread waits out before planning ({@link #admitThrough}), so a request stamped just before a
 * step starts can never miss it. The model-time timeline is then a function of the arrival stamps alone, not of how
 * late the engine thread runs: replaying the stamps through the simulator gives the same timeline.
 *
 * <p>With a KV connector ({@link KvConnector}) the loop also holds the blocks of finished prefills
 * ({@code do_remote_decode}) until the decode side says it has read them or their lease runs out (in model time,
 * extended by the decode side's heartbeats), and, while the engine waits only for remote KV, sleeps until the first
 * arrives, then starts the step that takes it in exactly then.
 */
final class EngineLoop implements Runnable {
    /** Spin this long before a deadline: parkNanos wakes up to ~100 us late on Linux. */
    static final long SPIN_NANOS = 200_000;
    /**
     * A real-time engine thread spins this long. Now and then parkNanos wakes it 1.5-5 ms late even on SCHED_FIFO (no
     * safepoint or GC phase coincides), which kept step lag p99 at 1.4-3.5 ms on the 2,000-stream benchmark; spinning
     * the last 6 ms brought it under 0.35 ms in four runs of five. It costs up to 6 ms of one core per step, which a
     * user who asked for a real-time engine has set a core aside for; without SCHED_FIFO the scheduler preempts a
     * spinning thread anyway (p99 7.6 ms with it), so there the spin stays short.
     *
     * <p>No spin takes more than half the wait, though: steps shorter than the spin (a light batch, the ramp-up of
     * a benchmark) had the thread spinning without pause, and Linux stops every real-time thread of a CPU that used
     * up 95% of a second (kernel.sched_rt_runtime_us) for the rest of that second. /proc/thread-self/schedstat showed
     * the engine thread waiting 21-50 ms on the run queue in exactly those stalls, the 35-132 ms late steps the
     * benchmark had kept finding.
     */
    static final long REALTIME_SPIN_NANOS = 6_000_000;

    private final EngineCore engine;
    private final int rank;
    private final ModelClock clock;
    private final NanoClock wall;
    private final ServerMetrics metrics;
    private final ConcurrentLinkedQueue<Choice> submits = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Choice> aborts = new ConcurrentLinkedQueue<>();
    /** Ids of LoRA adapters registered (positive) and unloaded (negative), for the engine's caches. */
    private final ConcurrentLinkedQueue<Integer> loraChanges = new ConcurrentLinkedQueue<>();
    /** Requests per LoRA adapter for vllm:lora_requests_info; null when LoRA is off. */
    private final LoraRequestStates loraStates;
    /** Engine thread: scratch for the adapters of the running requests. */
    private String[] runningAdapters = new String[16];
    private final ConcurrentLinkedQueue<PrefixCacheReset> resets = new ConcurrentLinkedQueue<>();
    /** Sleep and wake-up commands ({@link #sleep}, {@link #wakeUp}). */
    private final ConcurrentLinkedQueue<SleepCommand> sleeps = new ConcurrentLinkedQueue<>();
    /** Scheduling paused by a sleep: requests are taken in but no step runs until a wake-up. */
    private volatile boolean paused;
    /** A sleep in mode wait: no new request is scheduled, and the engine pauses once the running ones finish. */
    private SleepCommand pausing;
    /** Model time before which no step starts: the end of the last wake-up's reload. */
    private long resumeAtNanos;
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
    /** Set before the thread starts; the publisher itself is made and used on the engine thread only. */
    private KvEventsConfig kvEvents;
    private Integer kvEventsRank;
    private int kvEventsReplicaOffset;
    private KvEventPublisher publisher;
    private long cursorNanos;
    /** The KV connector; null without one. Its notices (a decode side read a hold, or renews its lease) come in here. */
    private final KvConnector kv;
    private final ConcurrentLinkedQueue<KvConnector.Notice> kvNotices = new ConcurrentLinkedQueue<>();
    /** Engine thread: finished prefills holding their blocks, by remote_request_id, and their leases' ends (model ns). */
    private final java.util.HashMap<String, Choice> held = new java.util.HashMap<>();
    private final java.util.HashMap<String, Long> leaseEnds = new java.util.HashMap<>();

    EngineLoop(EngineCore engine, int rank, ModelClock clock, ServerMetrics metrics, String name, boolean realtime,
               LoraRequestStates loraStates) {
        this(engine, rank, clock, metrics, name, realtime, loraStates, null);
    }

    EngineLoop(EngineCore engine, int rank, ModelClock clock, ServerMetrics metrics, String name, boolean realtime,
               LoraRequestStates loraStates, KvConnector kv) {
        this.kv = kv;
        this.engine = engine;
        this.loraStates = loraStates;
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
    void start() {
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
    void publishKvEvents(KvEventsConfig config, Integer rank, int replicaOffset) {
        kvEvents = config;
        kvEventsRank = rank;
        kvEventsReplicaOffset = replicaOffset;
    }

    /** Sets the topic of this engine's KV events, once its server knows the port it listens on. */
    void kvEventsTopic(String topic) {
        if (publisher != null) {
            publisher.topic(topic);
        }
    }

    /** This engine's data-parallel rank (0 without data parallelism). */
    int rank() {
        return rank;
    }

    ServerMetrics metrics() {
        return metrics;
    }

    /** Sequences reserved but not yet scheduled: what vLLM's front end counts as this engine's waiting. */
    int unscheduled() {
        return unscheduled.get();
    }

    /** Sequences scheduled and not finished: this engine's running, as its front end counts them. */
    int scheduled() {
        return unfinished.get() - unscheduled.get();
    }

    /**
     * Event loop: stamps the arrival of {@code choices}, whose waiting slots {@link #reserve} took, with the model time
     * now and hands them to the engine thread.
     */
    void submit(Choice[] choices) {
        stamping.incrementAndGet();
        try {
            long arrivalNanos = clock.modelNow();
            for (Choice c : choices) {
                c.arrive(arrivalNanos);
                if (c.request.lora() != null) {
                    loraStates.arrived(c.request.lora().name());
                }
                submits.offer(c);
            }
        } finally {
            stamping.decrementAndGet();
        }
        wake();
    }

    /** Event loop: reserves {@code n} waiting slots; false when more than {@code max} would wait (the caller answers 429). */
    boolean reserve(int n, int max) {
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
    void registerLora(int id) {
        loraChanges.offer(id);
        wake();
    }

    /** Any thread: the LoRA adapter with this id was unloaded; the engine frees its slot. */
    void unloadLora(int id) {
        loraChanges.offer(-id);
        wake();
    }

    /** Any thread (the side channel): a decode side has read, or renews its lease on, a held prefill's blocks. */
    void kvNotice(KvConnector.Notice notice) {
        kvNotices.offer(notice);
        wake();
    }

    /** Any thread: stop a choice now (client gone) and free its KV blocks. */
    void abort(Choice c) {
        aborts.offer(c);
        wake();
    }

    /**
     * Any thread: resets this engine's prefix cache between two steps (vLLM's {@code POST /reset_prefix_cache});
     * completes with whether it did (see {@link EngineCore#resetPrefixCache}).
     */
    CompletableFuture<Boolean> resetPrefixCache(boolean preemptRunning) {
        PrefixCacheReset reset = new PrefixCacheReset(preemptRunning, new CompletableFuture<>());
        resets.offer(reset);
        if (exited) {
            refusePendingResets();
        }
        wake();
        return reset.done;
    }

    private record PrefixCacheReset(boolean preemptRunning, CompletableFuture<Boolean> done) {
    }

    /**
     * Any thread: puts the engine to sleep as vLLM's {@code EngineCore.sleep(level, mode)}: scheduling pauses, in-flight
     * requests are aborted ({@code abort}), finished first ({@code wait}) or frozen ({@code keep}), and at level 1 or
     * more the prefix cache is emptied (the KV cache is discarded). Completes once asleep.
     */
    CompletableFuture<Long> sleep(String mode, boolean clearCache) {
        SleepCommand c = new SleepCommand(true, mode, clearCache, 0, new CompletableFuture<>());
        sleeps.offer(c);
        LockSupport.unpark(thread);
        return c.done;
    }

    /** Any thread: resumes scheduling once {@code reloadNanos} of model time (the weights' reload) have passed. */
    CompletableFuture<Long> wakeUp(long reloadNanos) {
        SleepCommand c = new SleepCommand(false, null, false, reloadNanos, new CompletableFuture<>());
        sleeps.offer(c);
        LockSupport.unpark(thread);
        return c.done;
    }

    boolean paused() {
        return paused;
    }

    /** Completed with the model time the command took effect at (a wake-up: when steps may start again). */
    private record SleepCommand(boolean sleep, String mode, boolean clearCache, long reloadNanos, CompletableFuture<Long> done) {
    }

    private void applySleeps() {
        SleepCommand c;
        while ((c = sleeps.poll()) != null) {
            if (!c.sleep()) {
                paused = false;
                pausing = null;
                resumeAtNanos = Math.max(resumeAtNanos, clock.modelNow() + c.reloadNanos());
                c.done().complete(resumeAtNanos);
            } else if (c.mode().equals("wait")) {
                pausing = c;
            } else {
                if (c.mode().equals("abort")) {
                    for (Choice live : new ArrayList<>(this.live)) {
                        abortChoice(live, FinishReason.ABORT);
                    }
                    flushTouched();
                }
                pause(c);
            }
        }
        if (pausing != null && engine.isIdle()) {
            SleepCommand done = pausing;
            pausing = null;
            pause(done);
        }
    }

    private void pause(SleepCommand c) {
        paused = true;
        if (c.clearCache()) {
            engine.resetPrefixCache(false, r -> { });
            if (publisher != null) {
                publisher.flush();
            }
        }
        c.done().complete(clock.modelNow());
    }

    /** Stops the thread; requests still in the engine finish with {@code abort} and their connections are told. */
    void stop() throws InterruptedException {
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
                RealtimePriority.applyToCurrentThread();
            } catch (IllegalStateException e) {
                started.complete("--realtime-engine: " + e.getMessage());
                return;
            }
        }
        if (kvEvents != null) {
            try {
                publisher = new KvEventPublisher(kvEvents, kvEventsRank, kvEventsReplicaOffset);
            } catch (RuntimeException e) {
                started.complete(e instanceof ConfigException ? e.getMessage() : "KV events: " + e);
                return;
            }
            engine.kvCache().setEventListener(publisher);
        }
        started.complete(null);
        while (!stopping) {
            drainInbox();
            expireLeases(clock.modelNow());
            applySleeps();
            if (paused) {
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
            cursorNanos = Math.max(cursorNanos, resumeAtNanos);
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
            if (loraStates != null && loraStates.byQueue()) {
                reportRunningAdapters();
            }
            long deadline = clock.toWall(plan.endNanos());
            wall.sleepUntil(deadline, realtime ? REALTIME_SPIN_NANOS : SPIN_NANOS);
            long lag = wall.nanoTime() - deadline;
            StepOutcome out = engine.completeStep(plan);
            cursorNanos = plan.endNanos();
            metrics.recordStep(plan.tokens(), plan.durationNanos(), lag);
            // before the tokens go out: a client that has its answer then finds /metrics counting it
            metrics.snapshot(engine, arrived.size());
            deliver(out);
            if (publisher != null) {
                publisher.flush();
            }
        }
        abortAll();
        exited = true;
        refusePendingResets();
        if (publisher != null) {
            publisher.flush();
            publisher.close();
        }
    }

    private void drainInbox() {
        Choice c;
        while ((c = submits.poll()) != null) {
            arrived.add(c);
            live.add(c);
        }
        KvConnector.Notice notice;
        while ((notice = kvNotices.poll()) != null) {
            applyKvNotice(notice);
        }
        while ((c = aborts.poll()) != null) {
            abortChoice(c, FinishReason.ABORT);
        }
        Integer lora;
        while ((lora = loraChanges.poll()) != null) {
            if (lora > 0) {
                engine.registerLora(lora);
            } else {
                engine.removeLora(-lora);
            }
        }
        flushTouched();
        PrefixCacheReset reset;
        while ((reset = resets.poll()) != null) {
            boolean done = engine.resetPrefixCache(reset.preemptRunning(),
                    r -> ((Choice) r.attachment()).recordPreemption(cursorNanos));
            if (publisher != null) {
                publisher.flush(); // AllBlocksCleared now, not with the next step's events
            }
            reset.done().complete(done);
        }
    }

    private void refusePendingResets() {
        PrefixCacheReset reset;
        while ((reset = resets.poll()) != null) {
            reset.done().complete(false);
        }
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
            metrics.recordFinish(r, c.index, c.exchange.choiceCount());
            unfinished.decrementAndGet();
            loraFinished(r);
        } else {
            boolean wasWaiting = r.firstScheduledNanos() < 0;
            if (!engine.abort(r, reason, cursorNanos)) {
                return;
            }
            if (wasWaiting) {
                unscheduled.decrementAndGet();
            }
            metrics.recordFinish(r, c.index, c.exchange.choiceCount());
            unfinished.decrementAndGet();
            loraFinished(r);
        }
        c.markFinished();
        touch(c.batch).add(c);
    }

    /**
     * Sleeps until remote KV arrives at model time {@code kvArrivalNanos} or a request is handed over, whichever is
     * first; returns the model time the next step starts at: the KV's arrival, or that request's if earlier.
     */
    private long awaitKvOrArrival(long kvArrivalNanos) {
        sleeping.set(true);
        long remaining = clock.toWall(kvArrivalNanos) - wall.nanoTime();
        if (remaining > 0 && submits.isEmpty() && aborts.isEmpty() && resets.isEmpty() && sleeps.isEmpty() && !stopping) {
            LockSupport.parkNanos(this, remaining);
        }
        sleeping.set(false);
        drainInbox();
        return arrived.isEmpty() ? kvArrivalNanos : Math.min(kvArrivalNanos, earliestArrival());
    }

    /** A finished prefill's blocks wait for the decode side, its lease running from its finish. */
    private void hold(Choice c, long finishedNanos) {
        EngineRequest r = c.request;
        String id = c.kvRequestId;
        c.holdKv(kv.held(r, rank, id));
        held.put(id, c);
        leaseEnds.put(id, finishedNanos + kv.config().leaseNanos());
        kv.metrics(rank).held(held.size());
    }

    private void applyKvNotice(KvConnector.Notice notice) {
        if (notice.heartbeat()) {
            long until = clock.modelNow() + kv.config().leaseExtensionNanos();
            leaseEnds.computeIfPresent(notice.requestId(), (id, end) -> Math.max(end, until));
            return;
        }
        Choice c = held.remove(notice.requestId());
        if (c == null) {
            kv.metrics(rank).unknownNotice(); // expired already, or never held here (vLLM logs a warning)
            return;
        }
        leaseEnds.remove(notice.requestId());
        engine.releaseKv(c.request);
        kv.metrics(rank).held(held.size());
    }

    /** Frees the blocks of every hold whose lease ended by {@code nowNanos} (vLLM's P side counts them expired). */
    private void expireLeases(long nowNanos) {
        if (leaseEnds.isEmpty()) {
            return;
        }
        for (Iterator<java.util.Map.Entry<String, Long>> it = leaseEnds.entrySet().iterator(); it.hasNext(); ) {
            java.util.Map.Entry<String, Long> lease = it.next();
            if (lease.getValue() <= nowNanos) {
                it.remove();
                engine.releaseKv(held.remove(lease.getKey()).request);
                kv.metrics(rank).expired();
                kv.metrics(rank).held(held.size());
            }
        }
    }

    /** Model time of the first lease to end; {@code Long.MAX_VALUE} when nothing is held. */
    private long nextLeaseEnd() {
        long next = Long.MAX_VALUE;
        for (long end : leaseEnds.values()) {
            next = Math.min(next, end);
        }
        return next;
    }

    /** Blocks held for decode sides, with their leases; for tests. */
    int heldCount() {
        return held.size();
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
        while (it.hasNext() && pausing == null) {
            Choice c = it.next();
            if (c.request.arrivalNanos() <= startNanos) {
                it.remove();
                engine.submit(c.request);
            }
        }
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
            ((Choice) r.attachment()).scanForStop(r.outputTokens());
        }
    }

    private void deliver(StepOutcome out) {
        long end = out.endNanos();
        for (int i = 0; i < out.tokenCount(); i++) {
            EngineRequest r = out.tokenRequest(i);
            Choice c = (Choice) r.attachment();
            if (c.lastTokenNanos < 0) {
                metrics.recordFirstToken(r, end);
            } else {
                metrics.recordInterToken(end - c.lastTokenNanos);
            }
            c.recordToken(end);
            if (c.exchange.wantsTokens()) {
                touch(c.batch).add(c);
            }
        }
        for (int i = 0; i < out.finishedCount(); i++) {
            EngineRequest r = out.finished(i);
            Choice c = (Choice) r.attachment();
            if (r.isKvHeld()) {
                hold(c, end);
            }
            live.remove(c);
            metrics.recordFinish(r, c.index, c.exchange.choiceCount());
            unfinished.decrementAndGet();
            loraFinished(r);
            c.markFinished();
            touch(c.batch).add(c);
        }
        flushTouched();
    }

    /** The adapters of the requests in the scheduler's running list, for the queue-based LoRA lists. */
    private void reportRunningAdapters() {
        int n = engine.runningCount();
        if (runningAdapters.length < n) {
            runningAdapters = new String[Math.max(n, 2 * runningAdapters.length)];
        }
        for (int i = 0; i < n; i++) {
            EngineRequest r = engine.running(i);
            runningAdapters[i] = r.lora() == null ? null : r.lora().name();
        }
        loraStates.runningNow(rank, runningAdapters, n);
    }

    private void loraFinished(EngineRequest r) {
        if (r.lora() != null) {
            loraStates.finished(r.lora().name());
        }
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
        if (paused && sleeps.isEmpty() && submits.isEmpty() && aborts.isEmpty() && resets.isEmpty() && !stopping) {
            LockSupport.park(this);
        }
        sleeping.set(false);
    }

    private void sleepUntilWork() {
        sleeping.set(true);
        if (submits.isEmpty() && aborts.isEmpty() && resets.isEmpty() && sleeps.isEmpty() && kvNotices.isEmpty() && !stopping) {
            long leaseEnd = nextLeaseEnd();
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
        for (Choice c : new ArrayList<>(live)) {
            abortChoice(c, FinishReason.ABORT);
        }
        flushTouched();
        metrics.snapshot(engine, 0);
    }
}
