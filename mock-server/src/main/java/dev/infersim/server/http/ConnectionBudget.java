package dev.infersim.server.http;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many client connections the process's HTTP servers hold at once, all of them together (the replicas and a
 * front door share one process and one descriptor limit), and which connection gives way when there are too many: as
 * nginx drains its connections when its worker has none free ({@code ngx_drain_connections}), the one idle longest
 * (accepted and silent since, or between requests) is closed, and where none is idle, the one just accepted. A client
 * that opens connections and sends nothing then takes descriptors from nobody: the replicas keep accepting, and the
 * front door keeps the ones it needs to reach them. A connection with a request begun is never closed here (its
 * header timeout bounds a slow one).
 *
 * <p>The limit leaves the process half of the descriptors it had free when the first server started, less a spare
 * ({@value #SPARE} for files, sockets to peers, jars the JVM opens later): each client connection may come with one more
 * descriptor, the front door's own connection to a replica in the same process. Where the limit cannot be read (not
 * Unix) there is none.
 */
final class ConnectionBudget {
    /** Descriptors kept out of the budget for what else the process opens. */
    static final int SPARE = 32;
    /** Fewest connections allowed whatever the limit, so a low limit still serves. */
    static final int MIN_CONNECTIONS = 16;

    static final ConnectionBudget PROCESS = new ConnectionBudget(fromDescriptorLimit());

    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    private final Set<ConnectionGuard> guards = ConcurrentHashMap.newKeySet();

    ConnectionBudget(int max) {
        this.max = max;
    }

    private static int fromDescriptorLimit() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            long free = unix.getMaxFileDescriptorCount() - unix.getOpenFileDescriptorCount() - SPARE;
            return (int) Math.min(Integer.MAX_VALUE, Math.max(MIN_CONNECTIONS, free / 2));
        }
        return Integer.MAX_VALUE;
    }

    int max() {
        return max;
    }

    /**
     * A connection was accepted. Over the limit, the connections idle longest, as many as there are too many, are
     * closed; where too few are idle, this one too. (The acceptor may have taken many before their handlers run.)
     */
    void opened(ConnectionGuard guard) {
        guards.add(guard);
        int excess = open.incrementAndGet() - max;
        if (excess <= 0) {
            return;
        }
        List<ConnectionGuard> idle = new ArrayList<>();
        for (ConnectionGuard g : guards) {
            if (g.idleSinceNanos() != ConnectionGuard.BUSY) {
                idle.add(g);
            }
        }
        if (idle.size() > excess) {
            long[] since = new long[idle.size()];
            for (int i = 0; i < since.length; i++) {
                since[i] = idle.get(i).idleSinceNanos(); // one read each: a connection may turn busy meanwhile
            }
            Integer[] order = new Integer[since.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compare(since[a] - since[b], 0));
            List<ConnectionGuard> oldest = new ArrayList<>(excess);
            for (int i = 0; i < excess; i++) {
                oldest.add(idle.get(order[i]));
            }
            idle = oldest;
        } else if (!idle.contains(guard)) {
            idle.add(guard);
        }
        for (ConnectionGuard g : idle) {
            g.evict();
        }
    }

    /** A connection closed. */
    void closed(ConnectionGuard guard) {
        if (guards.remove(guard)) {
            open.decrementAndGet();
        }
    }
}
