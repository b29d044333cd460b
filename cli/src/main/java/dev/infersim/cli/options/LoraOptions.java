package dev.infersim.cli.options;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.LoraConfig;
import picocli.CommandLine.Option;

/** vLLM's LoRA serving flags, shared by {@code serve} and {@code simulate}: they add a {@link LoraConfig} to a deployment. */
@OptionGroup.In(OptionGroup.LORA)
public final class LoraOptions {
    @Option(names = "--enable-lora", negatable = true, description = "Serve LoRA adapters: requests whose model names one run on it, at most "
            + "--max-loras adapters per step, each loaded into a GPU slot when not resident (vLLM's flag).")
    public boolean enableLora;

    @Option(names = "--max-loras", defaultValue = "1", paramLabel = "N",
            description = "GPU adapter slots: distinct adapters one step may run (default: ${DEFAULT-VALUE}).")
    public int maxLoras;

    @Option(names = "--max-lora-rank", defaultValue = "16", paramLabel = "R",
            description = "Largest adapter rank, which adapter slots and the cost model take every adapter to have: 1, 8, 16, "
                    + "32, 64, 128, 256, 320 or 512 (default: ${DEFAULT-VALUE}).")
    int maxLoraRank;

    @Option(names = "--max-cpu-loras", defaultValue = "0", paramLabel = "N",
            description = "Adapters cached in host memory, at least --max-loras; 0 means --max-loras (default: ${DEFAULT-VALUE}).")
    int maxCpuLoras;

    @Option(names = "--lora-host-link-gbps", defaultValue = "" + LoraConfig.DEFAULT_HOST_LINK_GBPS, paramLabel = "GB/s",
            description = "Host-to-GPU copy rate of an adapter load (default: ${DEFAULT-VALUE}; storage reads go at "
                    + "--load-bandwidth-gbps).")
    double hostLinkGbps;

    /** {@code d} with these flags' LoRA settings, adapters read from storage at {@code storageGbps}; unchanged without --enable-lora. */
    public Deployment apply(Deployment d, double storageGbps) {
        if (!enableLora) {
            return d;
        }
        return d.toBuilder().lora(LoraConfig.of(maxLoras, maxLoraRank, maxCpuLoras).withRates(hostLinkGbps, storageGbps)).build();
    }
}
