package dev.infersim.sim;

import dev.infersim.workload.WorkloadRequest;

/**
 * What a {@link Router} reads of a request: its prompt's length and leading token ids, and its LoRA adapter. A
 * workload's request in the simulator ({@link #of}), a parsed HTTP request at a live fleet's front door.
 */
public interface RoutedRequest {

    /** A workload's request, its token ids derived from its seeds. */
    static RoutedRequest of(WorkloadRequest w) {
        return new RoutedRequest() {
            @Override
            public int promptTokens() {
                return w.promptTokens();
            }

            @Override
            public String lora() {
                return w.lora();
            }

            @Override
            public int fillLeadingTokenIds(int[] dst, int count, int vocabSize) {
                return w.fillLeadingTokenIds(dst, count, vocabSize);
            }
        };
    }

    /** Prompt length in tokens. */
    int promptTokens();

    /** The LoRA adapter the request runs on, or null for the base model. */
    String lora();

    /**
     * Writes the first {@code min(count, promptTokens())} prompt token ids into {@code dst}; {@code vocabSize} bounds
     * ids that are derived rather than known.
     *
     * @return how many ids were written
     */
    int fillLeadingTokenIds(int[] dst, int count, int vocabSize);
}
