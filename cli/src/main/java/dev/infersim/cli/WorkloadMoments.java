package dev.infersim.cli;

import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

/**
 * The length moments of a workload that closed-form models need, measured on the very requests the simulator and the
 * benchmark client would send (the first {@code limit} of the seeded stream), so every dataset works alike.
 *
 * @param meanPromptTokens       P
 * @param meanOutputTokens       E[L], after EOS draws and max_tokens
 * @param meanOutputSquared      E[L^2]
 * @param samples                requests measured
 * @param maxPromptTokens        the longest prompt, which the engine rejects if it leaves no room in the context
 */
record WorkloadMoments(double meanPromptTokens, double meanOutputTokens, double meanOutputSquared, long samples,
                       int maxPromptTokens) {

    static WorkloadMoments of(Workload workload, long limit) {
        double prompt = 0;
        double output = 0;
        double outputSquared = 0;
        long n = 0;
        int maxPrompt = 0;
        for (WorkloadRequest r : workload) {
            prompt += r.promptTokens();
            output += r.outputTokens();
            outputSquared += (double) r.outputTokens() * r.outputTokens();
            maxPrompt = Math.max(maxPrompt, r.promptTokens());
            if (++n == limit) {
                break;
            }
        }
        return new WorkloadMoments(prompt / n, output / n, outputSquared / n, n, maxPrompt);
    }

    /**
     * Mean context of a decoding sequence, averaged over decode iterations rather than requests: long outputs spend
     * more iterations decoding, so the average is length-biased, P + (E[L^2] + E[L]) / (2 E[L]).
     */
    double meanDecodeContextTokens() {
        return meanPromptTokens + (meanOutputSquared + meanOutputTokens) / (2 * meanOutputTokens);
    }
}
