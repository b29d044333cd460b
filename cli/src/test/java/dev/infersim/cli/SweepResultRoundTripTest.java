package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.report.LoadSweep;
import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingResult;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A sweep's result is read back by the types that wrote it: one written by infersim at f8ad962, before the sweep's
 * results were typed ({@code sweep --request-rates 5,10 --goodput ttft:200 --metadata k=v --save-result} against the
 * mock), is read ({@link LoadSweep.Summary}, each run a {@code ServingResult<ClientKeys>}) and written again byte for
 * byte, and its summary is what the analysis draws again from its runs.
 */
class SweepResultRoundTripTest {

    private static Path resource(String name) throws Exception {
        return Path.of(SweepResultRoundTripTest.class.getResource("/results/" + name).toURI());
    }

    @Test
    void aSweepResultIsReadAndWrittenAgainByteForByte() throws Exception {
        Path file = resource("sweep.json");
        ObjectNode whole = ResultJson.readWhole(file);
        LoadSweep.Summary sweep = ResultJson.convert(whole.get("infersim_sweep"), LoadSweep.Summary.class);
        List<ServingResult<ClientKeys>> runs = new ArrayList<>();
        for (JsonNode run : whole.get("runs")) {
            runs.add(ClientKeys.read((ObjectNode) run));
        }
        assertEquals(Files.readString(file), ResultJson.text(new SweepCommand.SweepFile(sweep, runs)));

        List<LoadSweep.Point> points = runs.stream().map(r -> LoadSweep.Point.of(r.run().requestRate(), r)).toList();
        assertEquals(sweep, LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, points, sweep.sloAttainmentThreshold()));
    }
}
