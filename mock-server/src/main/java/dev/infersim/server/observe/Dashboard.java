package dev.infersim.server.observe;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The live dashboard: {@code GET /dashboard} is the page, {@code GET /dashboard/events} pushes a snapshot (see
 * {@link DashboardFeed} for its fields) every half second as server-sent events, and {@code GET
 * /dashboard/echarts.min.js} is the charting library the HTML reports use (ECharts, from its webjar), so the page needs
 * no network and no build step. The page keeps two minutes of history per chart and shows every replica side by side.
 * The same page replays a simulation when its events come from the simulator instead of a live server.
 */
public final class Dashboard {
    static final long PUSH_INTERVAL_MS = 500;
    private static final String ECHARTS = "META-INF/resources/webjars/echarts/5.3.1/dist/echarts.min.js";
    private static volatile Buffer echarts;

    private Dashboard() {
    }

    /** vLLM's TTFT histogram bounds, seconds: the page's TTFT chart uses them, live or replayed. */
    public static double[] ttftBucketsSeconds() {
        return ServerMetrics.TTFT_BUCKETS.clone();
    }

    /** vLLM's inter-token latency histogram bounds, seconds. */
    public static double[] itlBucketsSeconds() {
        return ServerMetrics.ITL_BUCKETS.clone();
    }

    /**
     * Mounts the three routes. {@code viewer} makes each new viewer's feed: a function from a wall-clock instant
     * ({@code System.nanoTime()}) to the JSON to push then, or null when there is nothing more to show (a finished
     * replay), which ends that viewer's stream.
     */
    public static void mount(Vertx vertx, Router router, Supplier<LongFunction<String>> viewer) {
        router.get("/dashboard").handler(rc -> rc.response().putHeader("content-type", "text/html; charset=utf-8")
                .putHeader("cache-control", "no-store").end(PAGE));
        router.get("/dashboard/echarts.min.js").handler(rc -> rc.response()
                .putHeader("content-type", "text/javascript; charset=utf-8").end(echarts()));
        router.get("/dashboard/events").handler(rc -> stream(vertx, rc.response(), viewer.get()));
    }

    /**
     * Mounts a live server's dashboard: the routes of {@link #mount} fed by {@code feed}, and a timer that samples it
     * every {@value DashboardFeed#SAMPLE_INTERVAL_MS} ms whether or not a page is open, so that a page opened at any
     * moment gets a full window and its history at once. The timer ends with the Vert.x instance.
     */
    public static void mountLive(Vertx vertx, Router router, DashboardFeed feed) {
        vertx.setPeriodic(DashboardFeed.SAMPLE_INTERVAL_MS, id -> feed.snapshot(System.nanoTime()));
        mount(vertx, router, feed::viewer);
    }

    private static void stream(Vertx vertx, HttpServerResponse response, LongFunction<String> snapshot) {
        response.setChunked(true).putHeader("content-type", "text/event-stream").putHeader("cache-control", "no-cache")
                // proxies such as nginx must pass each event on at once
                .putHeader("x-accel-buffering", "no");
        long[] timer = new long[1];
        Runnable push = () -> {
            String json = snapshot.apply(System.nanoTime());
            if (json == null) {
                vertx.cancelTimer(timer[0]);
                response.end("event: end\ndata: {}\n\n");
            } else if (!response.writeQueueFull()) { // a viewer that does not read misses snapshots, never piles them up
                response.write("data: " + json + "\n\n");
            }
        };
        timer[0] = vertx.setPeriodic(1, PUSH_INTERVAL_MS, id -> push.run());
        response.closeHandler(v -> vertx.cancelTimer(timer[0]));
    }

    private static Buffer echarts() {
        Buffer b = echarts;
        if (b == null) {
            try (InputStream in = Dashboard.class.getClassLoader().getResourceAsStream(ECHARTS)) {
                if (in == null) {
                    throw new IllegalStateException(ECHARTS + " is missing from the classpath (webjar org.webjars.npm:echarts)");
                }
                b = Buffer.buffer(in.readAllBytes());
                echarts = b;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return b;
    }

    private static final String PAGE = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>infersim dashboard</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:16px;color:#222}
            h1{font-size:20px;margin:0 0 4px} #status{color:#666;font-size:13px}
            .grid{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:10px} .chart{height:260px}
            table{border-collapse:collapse;font-size:13px;margin:10px 0} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
            th:first-child,td:first-child{text-align:left} .ok{color:#070} .off{color:#b00} .warming{color:#777}
            </style>
            <script src="/dashboard/echarts.min.js"></script></head><body>
            <h1>infersim live dashboard</h1><div id="status">connecting...</div>
            <table id="replicas"></table>
            <div class="grid">
            <div class="chart" id="c-queue"></div><div class="chart" id="c-kv"></div><div class="chart" id="c-rates"></div>
            <div class="chart" id="c-tokens"></div><div class="chart" id="c-step"></div><div class="chart" id="c-little"></div>
            <div class="chart" id="c-ttft"></div><div class="chart" id="c-itl"></div><div class="chart" id="c-fleet"></div>
            </div>
            <script>
            const KEEP = 240;
            // Little's law is judged once the window spans this many wall seconds (the server's window is ten).
            const WARM_S = 5;
            const state = {updates: 0, last: null, ended: false, peakRunning: 0};
            window.dashboard = state;
            const history = [];
            const charts = {};
            for (const id of ['queue','kv','rates','tokens','step','little','ttft','itl','fleet']) {
              charts[id] = echarts.init(document.getElementById('c-'+id), null, {renderer:'svg'});
            }
            function name(r){ return r.label || ('r'+r.replica); }
            function esc(v){ return String(v).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c])); }
            function n(v, d){ return (v===null||v===undefined||!Number.isFinite(v)) ? '-' : v.toFixed(d===undefined?1:d); }
            // A time scale as people write it: 10x, 1.63x, 0.25x (three significant figures at most).
            function scale(v){ return Number.isFinite(v) ? String(+v.toPrecision(3))+'x' : '-'; }
            // Whole model seconds at the ends of the time axis; the axis named under its middle and every label inside
            // the chart (containLabel), so nothing is cut at the edges.
            const TIME_AXIS = {type:'value',name:'model time, s',nameLocation:'middle',nameGap:26,
              min:v=>Math.floor(v.min),max:v=>Math.max(Math.ceil(v.max),Math.floor(v.min)+1),
              axisLabel:{margin:10,hideOverlap:true,formatter:v=>Math.round(v).toLocaleString('en-US')}};
            const GRID = {top:56,left:12,right:24,bottom:40,containLabel:true};
            // axis: the y axis's name in words with its unit; counts (requests, replicas) get whole-number ticks only.
            function lineChart(id, title, axis, series, counts){
              charts[id].setOption({animation:false,title:{text:title,textStyle:{fontSize:13}},tooltip:{trigger:'axis'},
                legend:{top:20,type:'scroll'},grid:GRID,xAxis:TIME_AXIS,
                yAxis:Object.assign({type:'value',name:axis,nameTextStyle:{align:'left'}}, counts ? {minInterval:1} : {}),series:series}, true);
            }
            function perReplica(key, label, f){
              const ids = history.length ? history[history.length-1].replicas.map(r=>r.replica) : [];
              const names = history.length ? history[history.length-1].replicas.map(name) : [];
              return ids.map((id,i)=>({name:label+' '+names[i],type:'line',showSymbol:false,
                data:history.map(s=>{ const r=s.replicas.find(x=>x.replica===id); return [s.model_time_s, r ? f(r) : null]; })}));
            }
            // vLLM's buckets have unequal widths, so each is drawn on its real bounds on a log axis, its height the count
            // per decade of latency: areas, not heights, compare. The +Inf bucket has no width; its count is in the title.
            // noun: what is counted (requests for TTFT, token gaps for ITL).
            function histogramChart(id, title, key, last, noun){
              const reps = last.replicas.filter(r=>r[key]);
              const series = reps.map((r,k)=>{ const h=r[key], bars=[];
                h.le.forEach((hi,i)=>{ const lo = i ? h.le[i-1] : hi/10, c=h.count[i];
                  if(c>0) bars.push([1000*lo, 1000*hi, c/Math.log10(hi/lo), c]); });
                return {name:name(r),type:'custom',encode:{x:[0,1],y:2},data:bars,
                  renderItem:(params, api)=>{ const a=api.coord([api.value(0),api.value(2)]), b=api.coord([api.value(1),0]);
                    const w=(b[0]-a[0])/reps.length;
                    return {type:'rect',shape:{x:a[0]+k*w,y:a[1],width:Math.max(1,w-1),height:b[1]-a[1]},style:api.style()}; }}; });
              const beyond = reps.reduce((t,r)=>t+r[key].count[r[key].count.length-1],0);
              const top = reps.length ? reps[0][key].le[reps[0][key].le.length-1] : 0;
              charts[id].setOption({animation:false,title:{text:title+(beyond?' ('+beyond+' '+noun+' above '+top+' s)':''),textStyle:{fontSize:13}},
                tooltip:{trigger:'item',formatter:p=>esc(p.seriesName)+': '+p.value[3]+' '+noun+' in '+n(p.value[0],1)+'-'+n(p.value[1],1)+' ms'},
                legend:{top:20},grid:GRID,xAxis:{type:'log',name:'latency, ms (vLLM buckets, log scale)',nameLocation:'middle',nameGap:26,
                  axisLabel:{margin:10,hideOverlap:true}},
                yAxis:{type:'value',name:noun+' per decade',nameTextStyle:{align:'left'}},series:series}, true);
            }
            function render(s){
              let rows = '<tr><th>replica</th><th>running</th><th>waiting</th><th>KV cache</th><th>arrivals /s</th><th>completions /s</th>'
                + '<th>tokens/step</th><th>step ms</th><th>finished</th><th>Little: L</th><th>&lambda;W</th></tr>';
              for (const r of s.replicas) {
                const L=r.little.L, lw=r.little.lambda_W, gap = L>0 ? Math.abs(L-lw)/L : 0;
                rows += '<tr data-replica="'+r.replica+'"><td>'+esc(name(r))+'</td><td class="running">'+r.running+'</td><td class="waiting">'+r.waiting+'</td>'
                  + '<td>'+n(100*r.kv_cache_usage)+'%</td><td>'+n(r.arrival_rate)+'</td><td>'+n(r.completion_rate)+'</td>'
                  + '<td>'+n(r.tokens_per_step)+'</td><td>'+n(r.step_ms,2)+'</td><td class="finished">'+r.finished+'</td>'
                  + '<td>'+n(L,2)+'</td>'+(r.little.window_s!==undefined && r.little.window_s<WARM_S
                    ? '<td class="warming" title="the window spans '+n(r.little.window_s)+' s so far">'+n(lw,2)+' (warming up)</td>'
                    : '<td class="'+(L<0.5||gap<0.2?'ok':'off')+'">'+n(lw,2)+'</td>')+'</tr>';
              }
              document.getElementById('replicas').innerHTML = rows;
              lineChart('queue','Requests running and waiting','requests',
                perReplica('running','running',r=>r.running).concat(perReplica('waiting','waiting',r=>r.waiting)), true);
              lineChart('kv','KV cache in use','KV cache in use, %', perReplica('kv','KV',r=>100*r.kv_cache_usage));
              lineChart('rates','Arrivals and completions per model second','rate, req/s',
                perReplica('a','arrivals',r=>r.arrival_rate).concat(perReplica('c','completions',r=>r.completion_rate)));
              lineChart('tokens','Tokens per engine step','tokens per step', perReplica('t','tokens/step',r=>r.tokens_per_step));
              lineChart('step','Engine step time','step time, ms', perReplica('s','step',r=>r.step_ms));
              lineChart('little',"Little's law: L vs lambda x W (last 10 s of wall time)",'requests',
                perReplica('L','L',r=>r.little.L).concat(perReplica('lw','lambda W',r=>r.little.lambda_W)));
              if (s.ready_replicas !== undefined) {
                lineChart('fleet','Replicas: ready and desired (autoscaler)','replicas',
                  [{name:'ready',type:'line',step:'end',showSymbol:false,data:history.map(h=>[h.model_time_s,h.ready_replicas])},
                   {name:'desired',type:'line',step:'end',showSymbol:false,data:history.map(h=>[h.model_time_s,h.desired_replicas])}], true);
              }
              histogramChart('ttft','Time to first token (since start)','ttft', s, 'requests');
              histogramChart('itl','Inter-token latency (since start)','itl', s, 'token gaps');
            }
            const events = new EventSource('/dashboard/events');
            // A message is one snapshot, or on connecting the server's recent ones (so the charts open with history).
            events.onmessage = e => {
              const data = JSON.parse(e.data), list = Array.isArray(data) ? data : [data];
              if (!list.length) return;
              for (const x of list) { history.push(x); if (history.length > KEEP) history.shift(); }
              const s = list[list.length-1];
              state.updates++; state.last = s;
              state.peakRunning = Math.max(state.peakRunning, ...s.replicas.map(r=>r.running));
              document.getElementById('status').textContent = (s.source ? s.source+': ' : '')+'model time '+n(s.model_time_s)+' s, '
                + (s.ready_replicas!==undefined ? s.ready_replicas+' replica(s) ready' : s.replicas.length+' replica(s)')
                + ', '+scale(s.time_scale)+'; updated '+state.updates+' times';
              render(s);
            };
            events.addEventListener('end', () => { state.ended = true; events.close();
              document.getElementById('status').textContent += ' (replay finished)'; });
            events.onerror = () => { if (!state.ended) document.getElementById('status').textContent = 'disconnected; retrying...'; };
            </script></body></html>
            """;
}
