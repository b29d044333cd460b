package dev.infersim.cli;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The step-time grid {@code profile} prints (the engine's steps: the GPU's work and the host time of {@code --engine});
 * {@code calibrate} reads the same columns plus measured_ms.
 */
final class StepTimes {
    static final String CSV_HEADER = "phase,batch,context_tokens,new_tokens,step_ms";

    /** One step shape and its time. Prefill: batch 1, context 0, new tokens = prompt. Decode: B sequences of that context. */
    record Row(String phase, int batch, int contextTokens, int newTokens, double stepMs) {
        String csv() {
            return String.format(Locale.ROOT, "%s,%d,%d,%d,%.4f", phase, batch, contextTokens, newTokens, stepMs);
        }

        BatchShape shape() {
            BatchShape s = new BatchShape();
            if (phase.equals("prefill")) {
                s.addPrefill(newTokens, contextTokens, true).addNewRequests(1);
            } else {
                for (int i = 0; i < batch; i++) {
                    s.addDecode(contextTokens);
                }
            }
            return s;
        }
    }

    private StepTimes() {
    }

    static List<Row> grid(CostModel cost, List<Integer> prefillLens, List<Integer> decodeBatches, List<Integer> contexts) {
        List<Row> rows = new ArrayList<>();
        for (int len : prefillLens) {
            rows.add(timed(cost, new Row("prefill", 1, 0, len, 0)));
        }
        for (int context : contexts) {
            for (int batch : decodeBatches) {
                rows.add(timed(cost, new Row("decode", batch, context, batch, 0)));
            }
        }
        return rows;
    }

    static Row timed(CostModel cost, Row r) {
        return new Row(r.phase(), r.batch(), r.contextTokens(), r.newTokens(), cost.stepNanos(r.shape()) / 1e6);
    }
}
