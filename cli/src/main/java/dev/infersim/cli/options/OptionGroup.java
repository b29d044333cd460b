package dev.infersim.cli.options;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The section of a command's {@code --help} an option is listed in ({@link GroupedHelp}), in the order the sections
 * are printed. An options class ({@code DeploymentOptions}...) is placed as a whole by {@link In} on its type, a
 * command's own option by {@link In} on its field.
 */
public enum OptionGroup {
    CONFIG("Configuration file"),
    DEPLOYMENT("Deployment: GPU, model, parallelism, memory, KV cache, scheduler"),
    WORKLOAD("Workload"),
    CLIENT("Client and endpoint"),
    TIMING("Timing"),
    ANSWERS("Answers: text, lengths, tokenizer"),
    FLEET("Fleet: replicas, routing, autoscaling, disaggregation"),
    SERVER("Server: listener, API, model features"),
    LORA("LoRA adapters"),
    OBSERVE("Metrics, events, ground truth, dashboard"),
    OBJECTIVES("Objectives and capacity"),
    OUTPUT("Results and reports"),
    FAULTS("Faults and debugging");

    public final String heading;

    OptionGroup(String heading) {
        this.heading = heading;
    }

    /** Places an options class or a command's option in a section of {@code --help}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.TYPE, ElementType.FIELD})
    public @interface In {
        OptionGroup value();
    }
}
