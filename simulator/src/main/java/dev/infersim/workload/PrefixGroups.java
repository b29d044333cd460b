package dev.infersim.workload;

import dev.infersim.common.SplitMix64;

import java.util.BitSet;

/**
 * Seeds of shared prefixes and which groups have been seen in a pass. A prefix group's token ids depend only on the
 * workload seed and the group id, so every request of a group starts with the same ids.
 */
final class PrefixGroups {

    private final long baseSeed;
    private final BitSet seen = new BitSet();

    PrefixGroups(long baseSeed) {
        this.baseSeed = baseSeed;
    }

    /** The token-id seed of group {@code group}. */
    long seedOf(int group) {
        return SplitMix64.valueAt(baseSeed, group);
    }

    /** Marks {@code group} as seen; true if this is its first request in the pass. */
    boolean markFirst(int group) {
        if (seen.get(group)) {
            return false;
        }
        seen.set(group);
        return true;
    }
}
