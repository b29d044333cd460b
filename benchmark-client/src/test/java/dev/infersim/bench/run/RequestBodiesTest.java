package dev.infersim.bench.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RequestBodiesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aRequestOnALoraAdapterNamesItAsItsModel() throws Exception {
        RequestBodies bodies = new RequestBodies("llama-3.1-8b", false, true, PromptRenderer.cl100k());
        WorkloadRequest base = new WorkloadRequest(0, 0, 8, 0, -1, 4, 4, 1, 0, false, "chat", null, null);
        WorkloadRequest adapter = new WorkloadRequest(1, 0, 8, 0, -1, 4, 4, 2, 0, false, "chat", null, "sql-lora");
        assertEquals("llama-3.1-8b", JSON.readTree(bodies.body(base).getBytes()).get("model").asText());
        assertEquals("sql-lora", JSON.readTree(bodies.body(adapter).getBytes()).get("model").asText());
    }
}
