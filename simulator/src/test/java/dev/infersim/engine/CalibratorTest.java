package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CalibratorTest {

    private static List<Calibrator.Measurement> synthetic(Deployment truth) {
        RooflineCostModel cost = new RooflineCostModel(truth);
        List<Calibrator.Measurement> data = new ArrayList<>();
        for (int len : new int[] {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
            BatchShape s = new BatchShape().addPrefill(len, 0, true);
            data.add(new Calibrator.Measurement(s, cost.stepNanos(s) / 1e6));
        }
        for (int context : new int[] {128, 512, 2048, 8192}) {
            for (int batch : new int[] {1, 4, 16, 64, 256}) {
                BatchShape s = new BatchShape();
                for (int i = 0; i < batch; i++) {
                    s.addDecode(context);
                }
                data.add(new Calibrator.Measurement(s, cost.stepNanos(s) / 1e6));
            }
        }
        return data;
    }

    @Test
    void recoversKnownFactorsFromSyntheticMeasurements() {
        Deployment start = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        GpuProfile g = start.gpu();
        double[] truthFactors = {0.61, 0.48, 0.57, 160, 0.38, 650, g.layerOverheadUs(), 15};
        Deployment truth = start.toBuilder().gpu(g.withFactors(truthFactors)).build();
        List<Calibrator.Measurement> data = synthetic(truth);

        Calibrator.Result result = Calibrator.fit(start, data);

        assertTrue(result.rmsErrorBefore() > 0.1, "the starting profile is far off: " + result.rmsErrorBefore());
        assertTrue(result.rmsErrorAfter() < 0.005, "fit reproduces the data: " + result.rmsErrorAfter());
        double[] fitted = result.fitted().factors();
        // Weight streaming and the fixed overheads are both constant per step, so one model's step times pin down only
        // their sum; the other factors each leave their own mark and come back individually.
        assertEquals(truthFactors[1], fitted[1], 0.02 * truthFactors[1], "attention bandwidth efficiency");
        assertEquals(truthFactors[2], fitted[2], 0.02 * truthFactors[2], "compute efficiency max");
        assertEquals(truthFactors[4], fitted[4], 0.02 * truthFactors[4], "attention compute efficiency");
        assertEquals(truthFactors[7], fitted[7], 0.05 * truthFactors[7], "sequence overhead");
        // and the fitted profile predicts shapes it never saw
        RooflineCostModel truthCost = new RooflineCostModel(truth);
        RooflineCostModel fittedCost = new RooflineCostModel(start.toBuilder().gpu(result.fitted()).build());
        BatchShape mixed = new BatchShape().addPrefill(3000, 1000, true);
        for (int i = 0; i < 40; i++) {
            mixed.addDecode(777);
        }
        for (BatchShape s : List.of(mixed, new BatchShape().addPrefill(6000, 0, true), new BatchShape().addDecode(3000))) {
            assertEquals(truthCost.stepNanos(s), fittedCost.stepNanos(s), 0.01 * truthCost.stepNanos(s));
        }
    }
}
