package dev.infersim.server.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.ConfigException;
import dev.infersim.server.TestServers;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --dataset-responses}: a prompt the dataset holds is answered with its stored reply (ids and text), cut or
 * continued as llm-d-inference-sim chooses, and one it does not with the synthetic text; the truth log says which. The
 * three file forms of llm-d-inference-sim's dataset tool read the same.
 */
class DatasetRepliesTest {
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    private static final String PROMPT = "Tell me a story about a lighthouse";
    private static final String REPLY = " Once upon a time, a keeper lit the lamp.";

    @TempDir
    Path dir;

    /** A record of the dataset tool's JSON: the prompt's hash and the reply's ids and texts. */
    private static ObjectNode record(int[] prompt, String reply, boolean base64Hash) {
        int[] ids = TOKENIZER.encode(reply);
        ObjectNode r = Json.MAPPER.createObjectNode();
        String hex = DatasetReplies.promptHash(prompt);
        r.put("prompt_hash", base64Hash ? Base64.getEncoder().encodeToString(HexFormat.of().parseHex(hex)) : hex);
        ObjectNode gen = r.putObject("gen_tokens");
        ArrayNode numbers = gen.putArray("numbers");
        ArrayNode strings = gen.putArray("strings");
        for (int id : ids) {
            numbers.add(id);
            strings.add(TOKENIZER.piece(id));
        }
        r.put("n_gen_tokens", ids.length);
        return r;
    }

    @Test
    void aStoredPromptIsAnsweredWithItsReplyAndAnyOtherWithTheSyntheticText() throws Exception {
        Path file = dir.resolve("replies.jsonl");
        Files.writeString(file, record(TOKENIZER.encodePrompt(PROMPT), REPLY, false) + "\n");
        TruthLog log = TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        MockServer s = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).truthLog(log)
                .datasetReplies(DatasetReplies.load(file)).build());
        int replyTokens = TOKENIZER.encode(REPLY).length;
        try {
            JsonNode stored = complete(s, "{\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 50}", "stored");
            assertEquals(REPLY, stored.get("choices").get(0).get("text").asText());
            assertEquals("stop", stored.get("choices").get(0).get("finish_reason").asText(), "the reply ends where it ends");
            assertEquals(replyTokens, stored.get("usage").get("completion_tokens").asInt());

            JsonNode cut = complete(s, "{\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 3}", "cut");
            assertEquals(TOKENIZER.decode(java.util.Arrays.copyOf(TOKENIZER.encode(REPLY), 3)),
                    cut.get("choices").get(0).get("text").asText());
            assertEquals("length", cut.get("choices").get(0).get("finish_reason").asText());

            JsonNode longer = complete(s, "{\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 30, \"ignore_eos\": true}", "on");
            assertTrue(longer.get("choices").get(0).get("text").asText().startsWith(REPLY), longer.toString());
            assertEquals(30, longer.get("usage").get("completion_tokens").asInt(), "ignore_eos runs on past the reply");

            JsonNode other = complete(s, "{\"prompt\": \"Something else\", \"max_tokens\": 5, \"ignore_eos\": true}", "other");
            assertTrue(!other.get("choices").get(0).get("text").asText().contains("keeper"), other.toString());

            // the token-id API answers the stored ids
            JsonNode ids = TestServers.post(s, "/inference/v1/generate", "{\"token_ids\": "
                    + Json.MAPPER.valueToTree(TOKENIZER.encodePrompt(PROMPT)) + ", \"sampling_params\": {\"max_tokens\": 50}}")
                    .json().get("choices").get(0).get("token_ids");
            assertEquals(Json.MAPPER.valueToTree(TOKENIZER.encode(REPLY)), ids);
            assertTrue(TestServers.eventually(10, () -> log.written() == 5));
        } finally {
            TestServers.close(s);
            log.close();
        }
        Map<String, String> reply = new HashMap<>();
        for (String line : Files.readAllLines(dir.resolve("truth.jsonl"))) {
            JsonNode row = Json.MAPPER.readTree(line);
            reply.put(row.get("request_id").asText(), row.get("reply").asText());
        }
        assertEquals("dataset", reply.get("stored"));
        assertEquals("dataset", reply.get("cut"));
        assertEquals("synthetic", reply.get("other"));
    }

    private static JsonNode complete(MockServer s, String body, String requestId) throws Exception {
        TestServers.Reply r = TestServers.post(s, "/v1/completions", body, "x-request-id", requestId);
        assertEquals(200, r.status(), r.raw().body());
        return r.json();
    }

    @Test
    void theDatasetToolsSqliteAndJsonReadAsTheJsonLines() throws Exception {
        int[] prompt = TOKENIZER.encodePrompt(PROMPT);
        ObjectNode rec = record(prompt, REPLY, true);
        Path json = dir.resolve("dataset.json");
        Files.writeString(json, Json.MAPPER.createArrayNode().add(rec).toString());
        Path db = dir.resolve("dataset.sqlite3");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
            c.createStatement().execute("CREATE TABLE llmd (id INTEGER PRIMARY KEY, prompt_hash BLOB NOT NULL, "
                    + "gen_tokens JSON NOT NULL, n_gen_tokens INTEGER NOT NULL)");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO llmd (prompt_hash, gen_tokens, n_gen_tokens) VALUES (?, ?, ?)")) {
                p.setBytes(1, HexFormat.of().parseHex(DatasetReplies.promptHash(prompt)));
                // as Go writes the tool's Tokenized struct: field names capitalised
                p.setString(2, "{\"Tokens\": " + rec.get("gen_tokens").get("numbers") + ", \"Strings\": "
                        + rec.get("gen_tokens").get("strings") + "}");
                p.setInt(3, rec.get("n_gen_tokens").asInt());
                p.executeUpdate();
            }
        }
        for (Path file : List.of(json, db)) {
            DatasetReplies d = DatasetReplies.load(file);
            assertEquals(1, d.size(), file.toString());
            DatasetReplies.Reply r = d.pick(prompt, 100, false, 7);
            assertEquals(REPLY, String.join("", r.pieces()), file.toString());
            assertNull(d.pick(TOKENIZER.encodePrompt("unknown"), 100, false, 7));
        }
    }

    @Test
    void aReplyIsChosenAsLlmdInferenceSimChoosesOne() throws Exception {
        int[] prompt = {1, 2, 3};
        StringBuilder lines = new StringBuilder();
        for (int length : new int[] {3, 8, 12}) {
            ObjectNode r = Json.MAPPER.createObjectNode().put("prompt_hash", DatasetReplies.promptHash(prompt));
            ArrayNode numbers = r.putObject("gen_tokens").putArray("numbers");
            ArrayNode strings = ((ObjectNode) r.get("gen_tokens")).putArray("strings");
            for (int i = 0; i < length; i++) {
                numbers.add(length);
                strings.add("x");
            }
            lines.append(r).append('\n');
        }
        Path file = dir.resolve("lengths.jsonl");
        Files.writeString(file, lines);
        DatasetReplies d = DatasetReplies.load(file);
        assertEquals(3, d.size());
        assertEquals(1, d.prompts());
        for (long seed = 0; seed < 20; seed++) {
            assertTrue(d.pick(prompt, 10, false, seed).length() <= 10, "no longer than max_tokens when one is");
            assertEquals(8, d.pick(prompt, 8, true, seed).length(), "ignore_eos: exactly max_tokens when one is");
            assertEquals(12, d.pick(prompt, 10, true, seed).length(), "else a longer one, cut");
            assertTrue(d.pick(prompt, 2, false, seed).length() > 2, "all longer: one of them, cut");
        }
        assertEquals(d.pick(prompt, 20, false, 5).length(), d.pick(prompt, 20, false, 5).length(), "the seed decides");
    }

    @Test
    void aFileThatCannotBeReadIsOneLineNamingTheFlag() throws Exception {
        ConfigException missing = assertThrows(ConfigException.class, () -> DatasetReplies.load(dir.resolve("none.jsonl")));
        assertTrue(missing.getMessage().startsWith("--dataset-responses "), missing.getMessage());
        Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, record(new int[] {1}, " ok", false) + "\n{\"prompt_hash\": 5}\n");
        ConfigException e = assertThrows(ConfigException.class, () -> DatasetReplies.load(bad));
        assertTrue(e.getMessage().contains("line 2: a record needs prompt_hash"), e.getMessage());
        Path empty = dir.resolve("empty.jsonl");
        Files.writeString(empty, "\n");
        assertTrue(assertThrows(ConfigException.class, () -> DatasetReplies.load(empty)).getMessage().contains("holds no replies"));
    }
}
