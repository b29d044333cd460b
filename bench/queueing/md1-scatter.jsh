// How much one simulated run's mean M/D/1 wait scatters around Pollaczek-Khinchine's (bench/queueing/README.md, "How much
// one run scatters"): Lindley's recursion W' = max(0, W + S - A) over Poisson gaps A and the matrix's M/D/1 service
// S = 53.496 ms (256-token prompts, 8 output tokens, llama-3.1-8b on an H100, one request at a time), many seeds per run
// length, a tenth of each run warm-up as in the matrix. About a minute:
//
//   jshell bench/queueing/md1-scatter.jsh
import java.util.Arrays;
import java.util.SplittableRandom;

double service = 0.053495906;
for (double load : new double[] {0.8, 0.9}) {
    double lambda = load / service;
    double formula = load * service / (2 * (1 - load));
    for (int n : new int[] {400_000, 4_000_000}) {
        int seeds = n > 1_000_000 ? 40 : 200;
        double[] means = new double[seeds];
        for (int seed = 0; seed < seeds; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            double wait = 0;
            double total = 0;
            for (int i = 0; i < n + n / 10; i++) {
                wait = Math.max(0, wait + service + Math.log(1 - random.nextDouble()) / lambda);
                if (i >= n / 10) {
                    total += wait;
                }
            }
            means[seed] = total / n;
        }
        double mean = Arrays.stream(means).average().orElseThrow();
        double sd = Math.sqrt(Arrays.stream(means).map(m -> (m - mean) * (m - mean)).sum() / (seeds - 1));
        Arrays.sort(means);
        System.out.printf("load %.1f, %,d requests: formula %.3f ms; over %d runs mean %+.2f%%, sd %.2f%%, 5th-95th percentile %+.2f%% to %+.2f%%%n",
                load, n, 1e3 * formula, seeds, 100 * (mean / formula - 1), 100 * sd / formula,
                100 * (means[seeds / 20] / formula - 1), 100 * (means[seeds - 1 - seeds / 20] / formula - 1));
    }
}
/exit
