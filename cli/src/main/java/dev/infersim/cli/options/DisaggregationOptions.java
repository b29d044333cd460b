package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code simulate}'s prefill/decode disaggregation flags: one split, or a search over every split of {@code --replicas}. */
@OptionGroup.In(OptionGroup.FLEET)
public final class DisaggregationOptions {
    @Option(names = "--prefill-replicas", paramLabel = "P",
            description = "Disaggregate: P replicas prefill each request (one token, KV held) and --decode-replicas pull its "
                    + "KV and generate; both flags or neither.")
    public Integer prefillReplicas;

    @Option(names = "--decode-replicas", paramLabel = "D", description = "Replicas of the decode pool (with --prefill-replicas).")
    public Integer decodeReplicas;

    @Option(names = "--prefill-router", paramLabel = "NAME", description = "Router of the prefill pool (default: --router).")
    public String prefillRouter;

    @Option(names = "--decode-router", paramLabel = "NAME", description = "Router of the decode pool (default: --router).")
    public String decodeRouter;

    @Option(names = "--plan-disaggregation",
            description = "Search every split of --replicas into prefill and decode pools, and the same replicas aggregated, "
                    + "for the highest request rate meeting --goodput (ttft, tpot) for --slo-attainment of the requests.")
    public boolean plan;

    @Option(names = "--slo-attainment", defaultValue = "0.9", paramLabel = "FRACTION",
            description = "Share of requests that must meet --goodput for --plan-disaggregation (default: ${DEFAULT-VALUE}, "
                    + "DistServe's).")
    public double sloAttainment;

    @Mixin
    public KvTransferOptions link;

    /** Whether one disaggregated split was asked for; fails when only one of the two pool sizes was given. */
    public boolean split() {
        ConfigException.check((prefillReplicas == null) == (decodeReplicas == null),
                "--%s-replicas needs --%s-replicas", prefillReplicas == null ? "decode" : "prefill",
                prefillReplicas == null ? "prefill" : "decode");
        ConfigException.check(!plan || prefillReplicas == null,
                "--plan-disaggregation searches the splits of --replicas itself; drop --prefill-replicas and --decode-replicas");
        return prefillReplicas != null;
    }

    public String prefillRouter(String fallback) {
        return prefillRouter != null ? prefillRouter : fallback;
    }

    public String decodeRouter(String fallback) {
        return decodeRouter != null ? decodeRouter : fallback;
    }
}
