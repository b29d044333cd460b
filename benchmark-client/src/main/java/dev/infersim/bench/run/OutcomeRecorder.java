package dev.infersim.bench.run;

import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.RequestOutcome;
import org.HdrHistogram.WriterReaderPhaser;

import java.util.ArrayList;
import java.util.List;

/**
 * One lane's ended requests on their way to the measured windows: written by the lane's event loop alone, taken by
 * the run's own thread alone, as HdrHistogram's {@code Recorder} hands over histograms. A {@link WriterReaderPhaser}
 * flips between two buffers, so the loop never waits for a lock shared with other lanes or with the reader: its
 * critical section is one add.
 */
final class OutcomeRecorder {
    /** An ended request and the window it counts in (the warmup or the measured one). */
    record Ended(MeasuredWindow into, RequestOutcome outcome) {
    }

    private final WriterReaderPhaser phaser = new WriterReaderPhaser();
    private volatile List<Ended> active = new ArrayList<>();
    private List<Ended> inactive = new ArrayList<>();

    /** On the lane's loop: one request ended. */
    void record(MeasuredWindow into, RequestOutcome outcome) {
        long critical = phaser.writerCriticalSectionEnter();
        try {
            active.add(new Ended(into, outcome));
        } finally {
            phaser.writerCriticalSectionExit(critical);
        }
    }

    /** On the run's thread: moves everything recorded since the last call to {@code to}, in the order it ended. */
    void drainTo(List<Ended> to) {
        phaser.readerLock();
        try {
            List<Ended> taken = active;
            active = inactive;
            phaser.flipPhase(); // returns once no writer is still adding to taken
            to.addAll(taken);
            taken.clear();
            inactive = taken;
        } finally {
            phaser.readerUnlock();
        }
    }
}
