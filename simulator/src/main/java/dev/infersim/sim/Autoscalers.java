package dev.infersim.sim;

import dev.infersim.common.Registry;

import java.util.List;

/** The registry of autoscalers, by the names {@code --autoscaler} takes: {@code hpa} ({@link HorizontalPodAutoscaler}). */
public final class Autoscalers {
    private static final Registry<AutoscalerSpec, Autoscaler> REGISTRY =
            new Registry<AutoscalerSpec, Autoscaler>("--autoscaler", "autoscaler").register("hpa", HorizontalPodAutoscaler::new);

    private Autoscalers() {
    }

    public static List<String> names() {
        return REGISTRY.names();
    }

    /** A new autoscaler by name, with its own history. */
    public static Autoscaler byName(String name, AutoscalerSpec spec) {
        return REGISTRY.create(name, spec);
    }
}
