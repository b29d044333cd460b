package dev.infersim.server.text;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;
import dev.infersim.server.json.Json;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Replies taken from a conversation dataset ({@code serve --dataset-responses FILE}), as llm-d-inference-sim answers
 * with one ({@code llm-d/llm-d-inference-sim@eec055a}: {@code pkg/dataset/custom_dataset.go},
 * {@code docs/dataset_tool.md}): a prompt is matched by the SHA-256 of its token ids (each a little-endian uint32, its
 * {@code getInputHash}) and answered with one of the replies stored for it. Files are its dataset tool's output: the
 * SQLite database (table {@code llmd}, or the file's only table: {@code prompt_hash} BLOB, {@code gen_tokens} JSON of
 * the reply's token ids and texts, {@code n_gen_tokens}), its JSON array of records, or JSON Lines of the same records
 * ({@code {"prompt_hash": base64 or hex, "gen_tokens": {"numbers"|"tokens": [...], "strings": [...]}}}). Everything is
 * read into memory at start, so a request never waits on the file.
 *
 * <p>Which stored reply, as llm-d-inference-sim chooses: with {@code ignore_eos} one of exactly the request's length,
 * else a longer one cut to it, else a shorter one continued with lorem; without it one no longer than max_tokens (the
 * reply ends there, finish_reason {@code stop}), else a longer one cut at max_tokens ({@code length}). Among several,
 * the request's text seed draws, so a seeded request gets the same reply each time. A prompt the dataset does not hold is
 * answered with the usual synthetic text (where llm-d-inference-sim picks a random stored reply). The truth log says
 * which ({@code "reply": "dataset"} or {@code "synthetic"}). The hashes match only prompts tokenized as the dataset's
 * were: serve with {@code --tokenizer} set to the model the dataset was made with.
 */
public final class DatasetReplies {
    /** One stored reply: its token ids and each token's text. */
    public record Reply(int[] ids, String[] pieces) {
        public int length() {
            return ids.length;
        }
    }

    private final Map<String, List<Reply>> byPromptHash;
    private final int replies;
    private final String source;

    private DatasetReplies(Map<String, List<Reply>> byPromptHash, int replies, String source) {
        this.byPromptHash = byPromptHash;
        this.replies = replies;
        this.source = source;
    }

    /** Reads a dataset file (SQLite by its header, else JSON or JSON Lines); a ConfigException names the flag and why. */
    public static DatasetReplies load(Path file) {
        String flag = "--dataset-responses " + file;
        ConfigException.check(Files.isRegularFile(file), "%s: no such file", flag);
        Map<String, List<Reply>> map = new HashMap<>();
        int[] count = new int[1];
        try {
            if (isSqlite(file)) {
                readSqlite(file, map, count);
            } else {
                readJson(file, map, count);
            }
        } catch (IOException | SQLException e) {
            throw new ConfigException(flag + ": cannot read it: " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(flag + ": " + e.getMessage(), e);
        }
        ConfigException.check(count[0] > 0, "%s: holds no replies", flag);
        return new DatasetReplies(map, count[0], file.toString());
    }

    /** Stored replies in all. */
    public int size() {
        return replies;
    }

    /** Prompts with a stored reply. */
    public int prompts() {
        return byPromptHash.size();
    }

    /** Where the replies came from. */
    public String source() {
        return source;
    }

    /**
     * The reply for a prompt of {@code promptIds}, or null when the dataset holds none for it.
     *
     * @param maxTokens the request's output budget
     * @param seed      draws among several stored replies
     */
    public Reply pick(int[] promptIds, int maxTokens, boolean ignoreEos, long seed) {
        List<Reply> stored = byPromptHash.get(promptHash(promptIds));
        if (stored == null) {
            return null;
        }
        List<Reply> exact = new ArrayList<>();
        List<Reply> shorter = new ArrayList<>();
        List<Reply> longer = new ArrayList<>();
        for (Reply r : stored) {
            (r.length() == maxTokens ? exact : r.length() < maxTokens ? shorter : longer).add(r);
        }
        List<Reply> from;
        if (ignoreEos) {
            from = !exact.isEmpty() ? exact : !longer.isEmpty() ? longer : shorter;
        } else {
            shorter.addAll(exact);
            from = !shorter.isEmpty() ? shorter : longer;
        }
        return from.get(SplitMix64.reduce(SplitMix64.mix64(seed ^ 0xDA7A5E7L), from.size()));
    }

    /** llm-d-inference-sim's prompt hash: SHA-256 of the ids as little-endian uint32s, in lower-case hex. */
    static String promptHash(int[] ids) {
        ByteBuffer bytes = ByteBuffer.allocate(4 * ids.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int id : ids) {
            bytes.putInt(id);
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes.array()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static boolean isSqlite(Path file) throws IOException {
        byte[] head = new byte[16];
        try (var in = Files.newInputStream(file)) {
            return in.readNBytes(head, 0, 16) == 16 && new String(head, StandardCharsets.US_ASCII).equals("SQLite format 3\0");
        }
    }

    private static void readSqlite(Path file, Map<String, List<Reply>> map, int[] count) throws SQLException {
        try {
            Class.forName("org.sqlite.JDBC"); // registers the driver, whatever a shaded jar kept of its service file
        } catch (ClassNotFoundException e) {
            throw new SQLException("the SQLite driver (org.xerial:sqlite-jdbc) is not on the class path", e);
        }
        try (Connection db = DriverManager.getConnection("jdbc:sqlite:file:" + file.toAbsolutePath() + "?mode=ro");
             Statement st = db.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet t = st.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
                while (t.next()) {
                    tables.add(t.getString(1));
                }
            }
            String table = tables.contains("llmd") ? "llmd" : tables.size() == 1 ? tables.get(0) : null;
            if (table == null) {
                throw new IllegalArgumentException("expected a table llmd (or a single table), found " + tables);
            }
            try (ResultSet rows = st.executeQuery("SELECT prompt_hash, gen_tokens FROM \"" + table.replace("\"", "\"\"") + "\"")) {
                while (rows.next()) {
                    add(map, count, HexFormat.of().formatHex(rows.getBytes(1)), Json.MAPPER.readTree(rows.getString(2)));
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("a gen_tokens value is not JSON: " + e.getMessage());
            }
        }
    }

    private static void readJson(Path file, Map<String, List<Reply>> map, int[] count) throws IOException {
        String first = firstNonBlank(file);
        if (first.startsWith("[")) {
            JsonNode all = Json.MAPPER.readTree(file.toFile());
            for (JsonNode record : all) {
                addRecord(map, count, record);
            }
            return;
        }
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int line = 0;
            for (String text = in.readLine(); text != null; text = in.readLine()) {
                line++;
                if (text.isBlank()) {
                    continue;
                }
                try {
                    addRecord(map, count, Json.MAPPER.readTree(text));
                } catch (IOException | IllegalArgumentException e) {
                    throw new IllegalArgumentException("line " + line + ": " + e.getMessage());
                }
            }
        }
    }

    private static String firstNonBlank(Path file) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int c;
            while ((c = in.read()) >= 0) {
                if (!Character.isWhitespace(c)) {
                    return String.valueOf((char) c);
                }
            }
        }
        return "";
    }

    private static void addRecord(Map<String, List<Reply>> map, int[] count, JsonNode record) {
        JsonNode hash = record.get("prompt_hash");
        if (hash == null || !hash.isTextual()) {
            throw new IllegalArgumentException("a record needs prompt_hash (base64 or hex of the prompt ids' SHA-256)");
        }
        add(map, count, hex(hash.asText()), record.get("gen_tokens"));
    }

    /** A hash as written: 64 hex digits, or base64 of the 32 bytes (the dataset tool's JSON). */
    private static String hex(String hash) {
        if (hash.matches("[0-9a-fA-F]{64}")) {
            return hash.toLowerCase(java.util.Locale.ROOT);
        }
        byte[] bytes = Base64.getDecoder().decode(hash);
        if (bytes.length != 32) {
            throw new IllegalArgumentException("prompt_hash " + hash + " is not a SHA-256 (32 bytes)");
        }
        return HexFormat.of().formatHex(bytes);
    }

    /** One reply from gen_tokens: the ids ({@code numbers} or {@code tokens}, any case) and their texts ({@code strings}). */
    private static void add(Map<String, List<Reply>> map, int[] count, String hash, JsonNode gen) {
        JsonNode ids = field(gen, "numbers", "tokens");
        JsonNode strings = field(gen, "strings");
        if (ids == null || !ids.isArray() || strings == null || !strings.isArray() || ids.size() != strings.size()
                || ids.isEmpty()) {
            throw new IllegalArgumentException("gen_tokens needs token ids (numbers) and as many strings, at least one");
        }
        int[] idArray = new int[ids.size()];
        String[] pieces = new String[ids.size()];
        for (int i = 0; i < idArray.length; i++) {
            idArray[i] = ids.get(i).asInt();
            pieces[i] = strings.get(i).asText();
        }
        map.computeIfAbsent(hash, h -> new ArrayList<>()).add(new Reply(idArray, pieces));
        count[0]++;
    }

    /** The first of {@code names} that {@code o} has, matched without case (Go's JSON decoding). */
    private static JsonNode field(JsonNode o, String... names) {
        if (o == null || !o.isObject()) {
            return null;
        }
        for (String name : names) {
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
        }
        return null;
    }
}
