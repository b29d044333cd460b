package dev.infersim.cli.options;

import dev.infersim.server.config.ModelFeatures;
import picocli.CommandLine.Option;

/**
 * {@code serve}'s flags for what the served model does beyond plain text: vLLM's {@code --tool-call-parser},
 * {@code --enable-auto-tool-choice}, {@code --reasoning-parser}, {@code --runner} and {@code --enable-sleep-mode}, and
 * infersim's shares of tool calls and reasoning ({@link ModelFeatures}).
 */
@OptionGroup.In(OptionGroup.SERVER)
public final class ModelFeatureOptions {
    @Option(names = "--tool-call-parser", paramLabel = "NAME", description = "vLLM's tool parser (hermes, llama3_json, "
            + "mistral, ...): tool_choice required or a named function then returns a tool call whose arguments are drawn "
            + "from the function's JSON schema; without one those are 400, as in vLLM.")
    String toolCallParser;

    @Option(names = "--enable-auto-tool-choice", description = "Let tool_choice auto (the default when tools are given) "
            + "call tools; needs --tool-call-parser, as in vLLM.")
    boolean enableAutoToolChoice;

    @Option(names = "--tool-call-probability", defaultValue = "" + ModelFeatures.DEFAULT_TOOL_CALL_PROBABILITY, paramLabel = "P",
            description = "Share of tool_choice auto replies that call a tool, drawn per choice from its seed "
                    + "(default: ${DEFAULT-VALUE}).")
    double toolCallProbability;

    @Option(names = "--reasoning-parser", paramLabel = "NAME", description = "vLLM's reasoning parser (deepseek_r1, "
            + "qwen3, ...): chat replies think first, streamed in delta.reasoning and returned in message.reasoning.")
    String reasoningParser;

    @Option(names = "--reasoning-fraction", defaultValue = "" + ModelFeatures.DEFAULT_REASONING_FRACTION, paramLabel = "F",
            description = "Share of a reasoning reply's output tokens spent thinking (default: ${DEFAULT-VALUE}).")
    double reasoningFraction;

    @Option(names = "--runner", defaultValue = "generate", paramLabel = "generate|pooling",
            description = "pooling serves /v1/embeddings (vectors of the model's hidden size, prefill-only in the engine) "
                    + "instead of chat and completions (default: ${DEFAULT-VALUE}).")
    String runner;

    @Option(names = "--enable-sleep-mode", description = "Serve POST /sleep, POST /wake_up and GET /is_sleeping (with "
            + "VLLM_SERVER_DEV_MODE=1, as vLLM); waking up copies the weights back over the host link (level 1) or reads "
            + "them from storage at --load-bandwidth-gbps (level 2).")
    boolean enableSleepMode;

    public ModelFeatures features(String devModeEnv, double loadBandwidthGbps) {
        boolean dev;
        try {
            dev = devModeEnv != null && Integer.parseInt(devModeEnv.trim()) != 0; // vLLM: bool(int(...))
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("VLLM_SERVER_DEV_MODE must be an integer, got " + devModeEnv);
        }
        return ModelFeatures.NONE.withTools(toolCallParser, enableAutoToolChoice, toolCallProbability)
                .withReasoning(reasoningParser, reasoningFraction).withRunner(runner)
                .withSleepMode(enableSleepMode, dev, loadBandwidthGbps);
    }
}
