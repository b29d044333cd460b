package dev.infersim.workload.arrival;

/** Every request arrives at time 0: vLLM's default {@code --request-rate inf}. */
public final class ImmediateArrivals implements ArrivalProcess {

    @Override
    public long nextArrivalNanos() {
        return 0L;
    }
}
