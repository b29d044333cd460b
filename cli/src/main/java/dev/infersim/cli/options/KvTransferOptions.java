package dev.infersim.cli.options;

import dev.infersim.engine.KvTransferLink;
import picocli.CommandLine.Option;

/**
 * The link a decode replica pulls prefill KV over ({@link KvTransferLink}), shared by {@code serve} and
 * {@code simulate}: infersim's flags, vLLM has none (its transfer time is the fabric's).
 */
@OptionGroup.In(OptionGroup.FLEET)
public final class KvTransferOptions {
    @Option(names = "--kv-transfer-gbps", defaultValue = "" + KvTransferLink.DEFAULT_GBPS, paramLabel = "GB/s",
            description = "GB/s each decode GPU pulls prefill KV at (default: ${DEFAULT-VALUE}, one 400 Gb/s NIC per GPU).")
    double gbps;

    @Option(names = "--kv-transfer-latency-ms", defaultValue = "" + KvTransferLink.DEFAULT_LATENCY_MS, paramLabel = "MS",
            description = "Fixed cost of each KV transfer, ms (default: ${DEFAULT-VALUE}, an assumption).")
    double latencyMs;

    public KvTransferLink link() {
        return new KvTransferLink(gbps, latencyMs);
    }
}
