package dev.infersim.engine;

import dev.infersim.common.Registry;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The registry of scheduling policies, named as vLLM's {@code --scheduling-policy}:
 * <ul>
 *   <li>{@code fcfs}: admit in arrival order; preempt the most recently admitted request; a preempted request goes
 *       back to the head of the queue (vLLM V1).</li>
 *   <li>{@code priority}: admit by (priority, arrival); preempt the running request with the largest (priority,
 *       arrival), i.e. the least important, newest one.</li>
 * </ul>
 */
public final class SchedulingPolicies {
    private static final Registry<Void, SchedulingPolicy> REGISTRY =
            new Registry<Void, SchedulingPolicy>("--scheduling-policy", "policy")
                    .register("fcfs", v -> new Fcfs())
                    .register("priority", v -> new Priority());

    private SchedulingPolicies() {
    }

    public static List<String> names() {
        return REGISTRY.names();
    }

    public static SchedulingPolicy byName(String name) {
        return REGISTRY.create(name, null);
    }

    private static final class Fcfs implements SchedulingPolicy {
        @Override
        public String name() {
            return "fcfs";
        }

        @Override
        public WaitingQueue newWaitingQueue() {
            return new DequeQueue();
        }

        @Override
        public int chooseVictim(EngineRequest[] running, int count) {
            return count - 1;
        }
    }

    private static final class Priority implements SchedulingPolicy {
        static final Comparator<EngineRequest> ORDER = Comparator.comparingInt(EngineRequest::priority)
                .thenComparingLong(EngineRequest::arrivalNanos)
                .thenComparingLong(EngineRequest::id);

        @Override
        public String name() {
            return "priority";
        }

        @Override
        public WaitingQueue newWaitingQueue() {
            return new HeapQueue(ORDER);
        }

        @Override
        public int chooseVictim(EngineRequest[] running, int count) {
            int victim = 0;
            for (int i = 1; i < count; i++) {
                if (ORDER.compare(running[i], running[victim]) > 0) {
                    victim = i;
                }
            }
            return victim;
        }
    }

    private static final class DequeQueue implements WaitingQueue {
        private final ArrayDeque<EngineRequest> deque = new ArrayDeque<>();

        @Override public void add(EngineRequest r) { deque.addLast(r); }
        @Override public void addPreempted(EngineRequest r) { deque.addFirst(r); }
        @Override public EngineRequest peek() { return deque.peekFirst(); }
        @Override public EngineRequest poll() { return deque.pollFirst(); }
        @Override public boolean remove(EngineRequest r) { return deque.remove(r); }
        @Override public int size() { return deque.size(); }
    }

    private static final class HeapQueue implements WaitingQueue {
        private final PriorityQueue<EngineRequest> heap;

        HeapQueue(Comparator<EngineRequest> order) {
            heap = new PriorityQueue<>(order);
        }

        @Override public void add(EngineRequest r) { heap.add(r); }
        @Override public void addPreempted(EngineRequest r) { heap.add(r); }
        @Override public EngineRequest peek() { return heap.peek(); }
        @Override public EngineRequest poll() { return heap.poll(); }
        @Override public boolean remove(EngineRequest r) { return heap.remove(r); }
        @Override public int size() { return heap.size(); }
    }
}
