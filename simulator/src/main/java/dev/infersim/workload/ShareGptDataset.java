package dev.infersim.workload;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The ShareGPT dataset as {@code vllm bench serve --dataset-name sharegpt} uses it: a JSON array of
 * {@code {"id": ..., "conversations": [{"from": "human"|"gpt", "value": text}, ...]}}. Each conversation gives one
 * request: the first human turn is the prompt and the length of the gpt reply after it is the request's
 * max_tokens (or {@code --sharegpt-output-len}). As in vLLM (benchmarks/datasets.py, is_valid_sequence) a pair is
 * dropped when the prompt or the reply has fewer than 4 tokens (the reply check is skipped with a fixed output
 * length), the prompt more than 1024, or both together more than 2048. Requests take the conversations in a
 * seeded random order, and beyond the dataset's size draw conversations uniformly with replacement, as vLLM
 * oversamples.
 *
 * <p>Token counts come from a caller-supplied counter (the benchmark client passes its tokenizer); the default,
 * {@link #APPROXIMATE_TOKENS}, assumes 4 characters per token, the usual rule of thumb for English BPE text. The file
 * is parsed as a stream, holding only the kept prompts and the two lengths per conversation.
 */
public final class ShareGptDataset implements Dataset {

    /** ceil(characters / 4), at least 1: a tokenizer-free estimate for English text. */
    public static final ToIntFunction<String> APPROXIMATE_TOKENS = text -> Math.max(1, (text.length() + 3) / 4);

    static final int MIN_TOKENS = 4;
    static final int MAX_PROMPT_TOKENS = 1024;
    static final int MAX_TOTAL_TOKENS = 2048;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String[] prompts;
    private final int[] promptTokens;
    private final int[] maxTokens;
    private final OutputLength outputLength;

    private ShareGptDataset(String[] prompts, int[] promptTokens, int[] maxTokens, OutputLength outputLength) {
        this.prompts = prompts;
        this.promptTokens = promptTokens;
        this.maxTokens = maxTokens;
        this.outputLength = outputLength;
    }

    /**
     * Reads a ShareGPT JSON file.
     *
     * @param path              the JSON file
     * @param tokenCounter      counts a text's tokens
     * @param fixedOutputTokens {@code --sharegpt-output-len}, or 0 to use each reply's length
     * @param outputLength      the EOS rule
     * @throws ConfigException naming the file (and line) when it is missing, malformed or holds no usable pair
     */
    public static ShareGptDataset load(Path path, ToIntFunction<String> tokenCounter, int fixedOutputTokens,
                                       OutputLength outputLength) {
        if (!Files.isRegularFile(path)) {
            throw new ConfigException("--dataset-path: ShareGPT file " + path + " does not exist");
        }
        List<String> prompts = new ArrayList<>();
        IntList promptTokens = new IntList();
        IntList outputTokens = new IntList();
        try (JsonParser parser = JSON.getFactory().createParser(path.toFile())) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                throw new ConfigException(path + line(parser.currentLocation())
                        + ": a ShareGPT file is a JSON array of conversations");
            }
            while (parser.nextToken() == JsonToken.START_OBJECT) {
                JsonNode entry = parser.readValueAsTree();
                String[] pair = firstExchange(entry.get("conversations"));
                if (pair == null) {
                    continue;
                }
                int prompt = tokenCounter.applyAsInt(pair[0]);
                int output = fixedOutputTokens > 0 ? fixedOutputTokens : tokenCounter.applyAsInt(pair[1]);
                if (isValid(prompt, output, fixedOutputTokens > 0)) {
                    prompts.add(pair[0]);
                    promptTokens.add(prompt);
                    outputTokens.add(output);
                }
            }
        } catch (JsonProcessingException e) {
            throw new ConfigException(path + line(e.getLocation()) + ": malformed ShareGPT JSON: "
                    + e.getOriginalMessage().replace('\n', ' '), e);
        } catch (IOException e) {
            throw new ConfigException("--dataset-path: cannot read " + path + ": " + e.getMessage(), e);
        }
        if (prompts.isEmpty()) {
            throw new ConfigException(path + ": no conversation has a human prompt and a gpt reply within vLLM's "
                    + "length limits (4..1024 prompt tokens, <= 2048 in total)");
        }
        return new ShareGptDataset(prompts.toArray(String[]::new), promptTokens.toArray(), outputTokens.toArray(),
                outputLength);
    }

    /** The first human turn and the first gpt turn after it, or null. */
    private static String[] firstExchange(JsonNode conversations) {
        if (conversations == null || !conversations.isArray()) {
            return null;
        }
        String prompt = null;
        for (JsonNode turn : conversations) {
            String from = turn.path("from").asText("");
            JsonNode value = turn.get("value");
            if (value == null || !value.isTextual()) {
                continue;
            }
            if (prompt == null && from.equals("human")) {
                prompt = value.asText();
            } else if (prompt != null && from.equals("gpt")) {
                return new String[] {prompt, value.asText()};
            }
        }
        return null;
    }

    /** vLLM's is_valid_sequence with its default limits. */
    static boolean isValid(int promptTokens, int outputTokens, boolean fixedOutput) {
        return promptTokens >= MIN_TOKENS
                && (fixedOutput || outputTokens >= MIN_TOKENS)
                && promptTokens <= MAX_PROMPT_TOKENS
                && promptTokens + outputTokens <= MAX_TOTAL_TOKENS;
    }

    @Override
    public String name() {
        return WorkloadSpec.SHAREGPT;
    }

    /** Number of usable conversations. */
    public int conversations() {
        return prompts.length;
    }

    /** The empirical distribution of prompt lengths, in tokens. */
    public EmpiricalLength promptLengths() {
        return new EmpiricalLength(promptTokens);
    }

    /** The empirical distribution of reply lengths (or the fixed output length), in tokens. */
    public EmpiricalLength outputLengths() {
        return new EmpiricalLength(maxTokens);
    }

    @Override
    public Cursor cursor(long seed, long requests) {
        int[] order = shuffledOrder(new SplitMix64(SplitMix64.valueAt(seed, 2)));
        long contentBase = SplitMix64.valueAt(seed, 0);
        SplitMix64 rng = new SplitMix64(0);
        return (index, arrivalNanos) -> {
            rng.reseed(SplitMix64.valueAt(contentBase, index));
            int entry = index < order.length ? order[(int) index] : rng.nextInt(order.length);
            int output = outputLength.outputTokens(maxTokens[entry], rng);
            return new WorkloadRequest(index, arrivalNanos, promptTokens[entry], 0, -1, maxTokens[entry], output,
                    rng.nextLong(), 0L, false, WorkloadSpec.SHAREGPT, prompts[entry]);
        };
    }

    /** A Fisher-Yates shuffle of the conversation indices. */
    private int[] shuffledOrder(SplitMix64 rng) {
        int[] order = new int[prompts.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private static String line(JsonLocation location) {
        return location == null || location.getLineNr() < 0 ? "" : ":" + location.getLineNr();
    }
}
