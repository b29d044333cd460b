package dev.infersim.sim;

import dev.infersim.common.ConfigException;

import java.util.List;
import java.util.Locale;

/** The registry of autoscalers, by the names {@code --autoscaler} takes: {@code hpa} ({@link HorizontalPodAutoscaler}). */
public final class Autoscalers {

    private Autoscalers() {
    }

    public static List<String> names() {
        return List.of("hpa");
    }

    /** A new autoscaler by name, with its own history. */
    public static Autoscaler byName(String name, AutoscalerSpec spec) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "hpa" -> new HorizontalPodAutoscaler(spec);
            default -> throw new ConfigException("--autoscaler: unknown autoscaler '" + name + "'; use one of "
                    + String.join(", ", names()));
        };
    }
}
