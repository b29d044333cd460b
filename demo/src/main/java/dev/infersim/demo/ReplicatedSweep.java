package dev.infersim.demo;

import java.util.ArrayList;
import java.util.List;

/**
 * The simulated curve: at each rate, several runs of the same length as the measured ones, each with its own seed,
 * averaged with a 95% t interval across them (independent replications, Law, <i>Simulation Modeling and Analysis</i>,
 * 5th ed., 2015, section 9.4). Virtual time makes them cheap, so the curve can be dense where the measured sweep cannot.
 */
final class ReplicatedSweep {

    /** One rate: the replications' mean with its intervals ({@link DemoSide#mean}), and the replications. */
    record Point(double rate, DemoSide mean, List<DemoSide> replications) {
    }

    /** Runs one replication at a rate. */
    interface Runner {
        DemoSide run(double ratePerS, int replication);
    }

    private final List<Point> points;

    private ReplicatedSweep(List<Point> points) {
        this.points = points;
    }

    static ReplicatedSweep run(double[] rates, int replications, Runner runner) {
        List<Point> points = new ArrayList<>();
        for (double rate : rates) {
            List<DemoSide> runs = new ArrayList<>();
            for (int k = 0; k < replications; k++) {
                runs.add(runner.run(rate, k));
            }
            points.add(new Point(rate, DemoSide.mean(runs), List.copyOf(runs)));
        }
        return new ReplicatedSweep(List.copyOf(points));
    }

    /** Every rate, lightest first. */
    List<Point> points() {
        return points;
    }

    /** The point at {@code rate} (within 0.1%), or null. */
    Point at(double rate) {
        for (Point p : points) {
            if (Math.abs(p.rate() / rate - 1) < 1e-3) {
                return p;
            }
        }
        return null;
    }
}
