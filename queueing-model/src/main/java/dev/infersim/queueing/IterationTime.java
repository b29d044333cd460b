package dev.infersim.queueing;

/**
 * Duration of one continuous-batching engine iteration, linear in its work:
 * tau = alpha + betaDecode * decodeSequences + betaPrefill * prefillTokens.
 * alpha is the fixed cost (weights read once per iteration, launch overheads), betaDecode the
 * marginal cost of one more sequence in the decode batch (its KV-cache reads), betaPrefill the
 * marginal cost of one prompt token prefilled in the same iteration (chunked prefill).
 * This is the linear iteration-time model of the continuous-batching queueing literature
 * (Li, Dai and Peng, arXiv 2504.07347; Yang, Jiao and Xu, arXiv 2407.05347), where the chain has textbook
 * reductions; a caller with an engine tabulates its own times instead ({@link TabulatedIterationTimes}).
 *
 * @param alphaSeconds fixed cost per iteration
 * @param betaDecodeSecondsPerSeq cost per decoding sequence
 * @param betaPrefillSecondsPerToken cost per prefilled prompt token
 */
public record IterationTime(double alphaSeconds, double betaDecodeSecondsPerSeq, double betaPrefillSecondsPerToken) {

    public IterationTime {
        Checks.nonNegative("alphaSeconds", alphaSeconds);
        Checks.nonNegative("betaDecodeSecondsPerSeq", betaDecodeSecondsPerSeq);
        Checks.nonNegative("betaPrefillSecondsPerToken", betaPrefillSecondsPerToken);
        if (alphaSeconds + betaDecodeSecondsPerSeq == 0) {
            throw new IllegalArgumentException("alphaSeconds and betaDecodeSecondsPerSeq are both 0:"
                    + " an iteration must take time");
        }
    }

    /** tau = alpha + betaDecode b (no prefill in the iteration). */
    public static IterationTime decodeOnly(double alphaSeconds, double betaDecodeSecondsPerSeq) {
        return new IterationTime(alphaSeconds, betaDecodeSecondsPerSeq, 0);
    }

    /**
     * The iteration times of this line for a workload of mean prompt P and mean output E[L]: an iteration of n running
     * requests carries in steady state n P / E[L] prompt tokens (admissions equal completions, n / E[L] per
     * iteration), and k prompts prefilled beside n decodes take one iteration of k P prompt tokens.
     */
    public IterationTimes forWorkload(double meanPromptTokens, double meanOutputTokens) {
        Checks.nonNegative("meanPromptTokens", meanPromptTokens);
        Checks.positive("meanOutputTokens", meanOutputTokens);
        IterationTime line = this;
        return new IterationTimes() {
            @Override
            public double decodeSeconds(int n) {
                return line.seconds(n, 0);
            }

            @Override
            public double meanSeconds(int n) {
                return line.seconds(n, n * meanPromptTokens / meanOutputTokens);
            }

            @Override
            public double prefillSeconds(int n, int prompts) {
                return line.seconds(n, prompts * meanPromptTokens);
            }

            @Override
            public double prefillIterations(int n, int prompts) {
                return 1;
            }
        };
    }

    public double seconds(double decodeSequences, double prefillTokens) {
        return alphaSeconds + betaDecodeSecondsPerSeq * decodeSequences + betaPrefillSecondsPerToken * prefillTokens;
    }
}
