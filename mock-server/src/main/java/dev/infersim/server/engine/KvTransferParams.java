package dev.infersim.server.engine;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.JsonFields;

import java.io.IOException;

/**
 * A request's {@code kv_transfer_params} as vLLM's NixlConnector reads them, and the ones it answers with
 * (vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py at
 * https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py):
 * <ul>
 *   <li>{@code do_remote_decode: true} (what llm-d's sidecar sends a prefill pod, the {@code remote_*} keys null): the
 *       request is prefilled here and, once finished, its blocks are held for the decode side; the response carries
 *       {@code request_finished}'s dict, in its order: {@code do_remote_prefill: true}, {@code do_remote_decode: false},
 *       {@code remote_block_ids} (one list per KV-cache group: one), {@code remote_engine_id},
 *       {@code remote_request_id}, {@code remote_host}, {@code remote_port}, {@code tp_size},
 *       {@code remote_num_tokens} (the tokens computed).</li>
 *   <li>{@code do_remote_prefill: true} with those keys: the prompt's KV is pulled from that engine rather than
 *       computed. vLLM pulls only when {@code remote_block_ids} and all of {@code remote_engine_id},
 *       {@code remote_request_id}, {@code remote_host} and {@code remote_port} are there, and otherwise logs "Got invalid
 *       KVTransferParams" and never completes the load; the mock refuses such a request (400) instead.</li>
 * </ul>
 * Without a KV connector ({@code --kv-transfer-config}) vLLM passes the dict on to a scheduler that ignores it, and so
 * does the mock. The mock numbers its blocks from 1, as vLLM's block pool does (block 0 is its null block).
 *
 * @param remoteDecode    do_remote_decode
 * @param remotePrefill   do_remote_prefill
 * @param remoteEngineId  the prefill engine (remote_engine_id), or null
 * @param remoteRequestId the prefill request (remote_request_id), or null
 * @param remoteHost      where the prefill engine's side channel listens (remote_host), or null
 * @param remotePort      its port (remote_port), or 0
 */
public record KvTransferParams(boolean remoteDecode, boolean remotePrefill, String remoteEngineId, String remoteRequestId,
                        String remoteHost, int remotePort) {
    public static final String FIELD = "kv_transfer_params";

    /** Longest {@code remote_engine_id} or {@code remote_request_id} taken (vLLM's are UUIDs and request ids). */
    static final int MAX_ID_CHARS = 1024;
    /** Most KV-cache groups in {@code remote_block_ids} (one per attention type a model has). */
    static final int MAX_KV_GROUPS = 64;
    /** Largest {@code tp_size} taken. */
    static final int MAX_TP_SIZE = 1024;

    /**
     * A request's {@code kv_transfer_params} (null when it has none), every key of vLLM's that it gives checked as
     * vLLM's types: booleans, non-empty ids, a {@code remote_host} among the connector's peers
     * ({@link KvTransferConfig#allowsPeer}), a port, block ids (non-negative integers, flat or one list per KV-cache
     * group, no more than {@code maxModelLen} in all: a block holds at least one token), {@code tp_size} from 1 and
     * {@code remote_num_tokens} from 0 to {@code maxModelLen}. A 400 names the key at fault.
     */
    public static KvTransferParams parse(JsonNode p, KvTransferConfig config, int maxModelLen) {
        if (p == null || p.isNull()) {
            return null;
        }
        if (!p.isObject()) {
            throw ApiException.badRequest(FIELD, FIELD + ": expected an object, got " + JsonFields.describe(p));
        }
        JsonFields o = JsonFields.within((ObjectNode) p, FIELD);
        boolean decode = o.optBool("do_remote_decode", false);
        boolean prefill = o.optBool("do_remote_prefill", false);
        String engine = id(o, "remote_engine_id");
        String request = id(o, "remote_request_id");
        String host = o.optString("remote_host");
        Integer port = o.optInt("remote_port", 1, 65535);
        JsonNode blocks = o.given("remote_block_ids");
        if (blocks != null) {
            checkBlockIds(o, blocks, maxModelLen);
        }
        o.optInt("tp_size", 1, MAX_TP_SIZE);
        o.optInt("remote_num_tokens", 0, maxModelLen);
        if (!prefill) {
            return new KvTransferParams(decode, false, null, null, null, 0);
        }
        if (engine == null || request == null || host == null || port == null || blocks == null) {
            throw ApiException.badRequest(FIELD, FIELD + ": do_remote_prefill needs remote_engine_id, remote_request_id, "
                    + "remote_host, remote_port and a non-empty remote_block_ids, as the prefill's response gives them");
        }
        if (!config.allowsPeer(host)) {
            throw ApiException.badRequest(FIELD, FIELD + ".remote_host: '" + (host.length() > 64 ? host.substring(0, 64) + "..." : host)
                    + "' is not a KV transfer peer of this server (its side-channel host " + config.sideChannelHost()
                    + " or --kv-transfer-peers " + String.join(",", config.peers()) + ")");
        }
        return new KvTransferParams(decode, true, engine, request, host, port);
    }

    private static String id(JsonFields o, String key) {
        String id = o.optString(key);
        if (id != null && (id.isEmpty() || id.length() > MAX_ID_CHARS)) {
            throw ApiException.badRequest(FIELD, FIELD + "." + key + ": expected 1 to " + MAX_ID_CHARS + " characters, got "
                    + id.length());
        }
        return id;
    }

    /** Block ids as vLLM sends them: a non-empty list of non-negative integers, or of such lists (one per KV-cache group). */
    private static void checkBlockIds(JsonFields o, JsonNode blocks, int maxModelLen) {
        String what = "a non-empty list of block ids (integers >= 0), or of such lists, one per KV-cache group";
        if (!blocks.isArray() || blocks.isEmpty()) {
            throw o.wrongType("remote_block_ids", what, blocks);
        }
        boolean grouped = blocks.get(0).isArray();
        if (grouped && blocks.size() > MAX_KV_GROUPS) {
            throw ApiException.badRequest(FIELD, FIELD + ".remote_block_ids: at most " + MAX_KV_GROUPS + " KV-cache groups, got "
                    + blocks.size());
        }
        long ids = 0;
        for (JsonNode b : blocks) {
            if (grouped != b.isArray()) {
                throw o.wrongType("remote_block_ids", what, blocks);
            }
            if (grouped) {
                for (JsonNode id : b) {
                    checkBlockId(o, id, what);
                }
                ids += b.size();
            } else {
                checkBlockId(o, b, what);
                ids++;
            }
        }
        if (ids > maxModelLen) {
            throw ApiException.badRequest(FIELD, FIELD + ".remote_block_ids: " + ids + " blocks, more than the " + maxModelLen
                    + " tokens of the model's context could fill");
        }
    }

    private static void checkBlockId(JsonFields o, JsonNode id, String what) {
        if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0) {
            throw o.wrongType("remote_block_ids", what, id);
        }
    }

    /**
     * Writes a response's {@code kv_transfer_params}: a prefill's (its first choice's, as vLLM's completions take the
     * first prompt's) when that choice finished holding its blocks, else null.
     */
    public static void writeResponse(JsonGenerator g, Choice[] choices) throws IOException {
        Choice.HeldKv held = choices[0].heldKv();
        if (held == null) {
            g.writeNullField(FIELD);
            return;
        }
        g.writeObjectFieldStart(FIELD);
        g.writeBooleanField("do_remote_prefill", true);
        g.writeBooleanField("do_remote_decode", false);
        g.writeArrayFieldStart("remote_block_ids");
        g.writeStartArray();
        for (int b : held.blockIds()) {
            g.writeNumber(b + 1);
        }
        g.writeEndArray();
        g.writeEndArray();
        g.writeStringField("remote_engine_id", held.engineId());
        g.writeStringField("remote_request_id", held.requestId());
        g.writeStringField("remote_host", held.host());
        g.writeNumberField("remote_port", held.port());
        g.writeNumberField("tp_size", held.tpSize());
        g.writeNumberField("remote_num_tokens", held.computedTokens());
        g.writeEndObject();
    }
}
