package dev.infersim.bench.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.infersim.result.OutputFile;
import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingResult;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * A self-contained HTML report: Apache ECharts 5.3.1 (from its webjar) inlined, the result JSON inlined, and charts
 * drawn from it in the browser: latency percentile curves (TTFT, TPOT, per-token ITL, chunk ICL, E2EL, send lag),
 * latency and throughput per second, the scraped server metrics timeline, a fleet's replicas with latency and SLO
 * attainment over time (simulate), and for sweeps latency vs offered load and
 * throughput vs latency; plus the metadata a benchmark report must carry (endpoint, model, workload, load settings,
 * warmup, samples, machine, version). Opens offline: no network access needed. A chart with nothing to plot (no
 * request completed) says so in words, and a chart that fails shows a visible error line;
 * {@code HtmlReportBrowserTest} checks both in headless Chromium.
 */
public final class HtmlReport {
    private static final String ECHARTS = "META-INF/resources/webjars/echarts/5.3.1/dist/echarts.min.js";
    private static final ObjectWriter JSON = ResultJson.mapper().writer().without(SerializationFeature.INDENT_OUTPUT);

    private HtmlReport() {
    }

    /** Writes the report of one run. */
    public static void writeRun(Path file, Object result) {
        write(file, "infersim benchmark report", new Data(List.of(result), null));
    }

    /** Writes the report of a sweep: every point's charts plus the sweep curves. */
    public static void writeSweep(Path file, Object sweep, List<?> points) {
        write(file, "infersim sweep report", new Data(points, sweep));
    }

    /** What a report's page draws: the runs' results, and a sweep's analysis when there is one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    private record Data(List<?> runs, Object sweep) {
    }

    private static void write(Path file, String title, Data data) {
        writePage(file, TEMPLATE.replace("%TITLE%", title).replace("%ECHARTS%", echartsScript())
                .replace("%DATA%", toScriptJson(data)));
    }

    /**
     * Writes a self-contained page whose template holds {@code %ECHARTS%} (the charting library) and {@code %DATA%}
     * (the data, as a script literal), creating parent directories.
     */
    public static void writePage(Path file, String template, Object data) {
        writePage(file, template.replace("%ECHARTS%", echartsScript()).replace("%DATA%", toScriptJson(data)));
    }

    /** Whole or not at all: a full disk leaves no truncated page ({@link OutputFile}). */
    private static void writePage(Path file, String page) {
        OutputFile.writeString(file, page);
    }

    private static String toScriptJson(Object data) {
        try {
            return JSON.writeValueAsString(data).replace("</", "<\\/");
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The charting library every infersim page draws with (ECharts from its webjar), ready to inline in a script
     * element, so pages open offline.
     */
    public static String echartsScript() {
        try (InputStream in = HtmlReport.class.getClassLoader().getResourceAsStream(ECHARTS)) {
            if (in == null) {
                throw new IllegalStateException(ECHARTS + " is missing from the classpath (webjar org.webjars.npm:echarts)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("</script", "<\\/script") + "\n" + BANDS;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Interval drawing shared by every page: {@code infersimBand(name, [[x, low, high]], colour)}, a shaded area between
     * the ends of a curve's 95% intervals, and {@code infersimErrorBars(name, [[x, low, high]], colour)}, a capped
     * vertical bar per point (a dotted stub without a top cap where the high end is null: too few samples to bound it).
     * Both are ECharts custom series, so they work on log axes, where stacked areas do not.
     */
    private static final String BANDS = """
            function infersimRgba(hex, a){ const v=parseInt(hex.slice(1),16); return 'rgba('+(v>>16)+','+((v>>8)&255)+','+(v&255)+','+a+')'; }
            function infersimBand(name, points, color){
              const ok = points.filter(p=>Number.isFinite(p[1])&&Number.isFinite(p[2])&&p[1]>0);
              return {name:name, type:'custom', silent:true, z:1, clip:true, encode:{x:0,y:[1,2]}, data:ok,
                renderItem:(params, api)=>{ if(params.dataIndex!==0) return null;
                  const up=ok.map(p=>api.coord([p[0],p[2]])), down=ok.map(p=>api.coord([p[0],p[1]])).reverse();
                  return {type:'polygon', shape:{points:up.concat(down)}, style:{fill:infersimRgba(color,0.16)}}; }};
            }
            function infersimErrorBars(name, points, color){
              const ok = points.filter(p=>Number.isFinite(p[1])&&p[1]>0);
              return {name:name, type:'custom', silent:true, z:3, clip:true, encode:{x:0,y:1},
                data:ok.map(p=>[p[0],p[1],Number.isFinite(p[2])?p[2]:-1]),
                renderItem:(params, api)=>{ const x=api.value(0), lo=api.coord([x,api.value(1)]), top=params.coordSys.y;
                  const open=!(api.value(2)>0), hi=open? [lo[0],Math.max(top,lo[1]-28)] : api.coord([x,api.value(2)]);
                  const y2=Math.max(hi[1],top), st={stroke:color,lineWidth:1.5};
                  const parts=[{type:'line',shape:{x1:lo[0],y1:lo[1],x2:hi[0],y2:y2},style:open?{stroke:color,lineWidth:1.5,lineDash:[2,3]}:st},
                    {type:'line',shape:{x1:lo[0]-4,y1:lo[1],x2:lo[0]+4,y2:lo[1]},style:st}];
                  if(!open) parts.push({type:'line',shape:{x1:hi[0]-4,y1:y2,x2:hi[0]+4,y2:y2},style:st});
                  return {type:'group',children:parts}; }};
            }
            """;

    private static final String TEMPLATE = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
            h1{font-size:22px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
            .chart{width:100%;height:340px} .grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:12px}
            table{border-collapse:collapse;font-size:13px;width:100%} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;overflow-wrap:break-word} th{overflow-wrap:normal}
            .bad{color:#b00;font-weight:bold} .ok{color:#070} .report-error{color:#fff;background:#b00;padding:4px 8px} .no-data{color:#666;font-style:italic}
            </style>
            <script>
            // A chart that fails must say so on the page, not leave a silent gap: errors become a visible line.
            function reportError(where, e){const p=document.createElement('p'); p.className='report-error';
              p.textContent='Report error in '+where+': '+((e&&e.message)||e);
              (document.getElementById('content')||document.body||document.documentElement).appendChild(p); return p;}
            window.addEventListener('error', ev=>reportError('script', ev.message));
            </script>
            <script>%ECHARTS%</script></head><body>
            <h1>%TITLE%</h1><div id="content"></div>
            <script>
            const DATA = %DATA%;
            const content = document.getElementById('content');
            function el(tag, html, cls){const e=document.createElement(tag); if(html!==undefined) e.innerHTML=html; if(cls) e.className=cls; content.appendChild(e); return e;}
            function esc(v){return String(v).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
            // A result key, free to wrap after its underscores and nowhere else (never "infer sim_ base _url").
            function key(k){return esc(k).replace(/_/g,'_<wbr>');}
            function fmt(v){ if(typeof v==='number') return Number.isNaN(v)? '-' : Number.isInteger(v)? v : v.toFixed(3);
              if(v===null||v===undefined) return '-';
              if(Array.isArray(v)) return v.length? v.map(fmt).join('; ') : '-';
              return typeof v==='object'? (Object.keys(v).map(k=>k+': '+fmt(v[k])).join(', ')||'-') : v; }
            function finite(v){return typeof v==='number' && Number.isFinite(v);}
            function yOf(d){return Array.isArray(d)? d[1] : d;}
            // Series with nothing to draw are left out (a log axis cannot show 0), and a chart left with no series says so
            // in words instead of drawing empty axes.
            function chart(option){
              const logAxes=[].concat(option.yAxis).map(a=>a.type==='log');
              for(const s of option.series){ if(logAxes[s.yAxisIndex||0]) s.data=s.data.map(d=>finite(yOf(d))&&yOf(d)>0? d : (Array.isArray(d)? [d[0],null] : null)); }
              option.series=option.series.filter(s=>s.data.some(d=>finite(yOf(d))));
              if(!option.series.length){ return el('p', esc(option.title.text)+': nothing to plot.', 'no-data'); }
              layout(option);
              const d=document.createElement('div'); d.className='chart'; content.appendChild(d);
              try { const c=echarts.init(d, null, {renderer:'svg'}); option.animation=false; c.setOption(option); return c; }
              catch(e){ d.remove(); reportError('chart "'+((option.title&&option.title.text)||'?')+'"', e); return null; } }
            // Room for every label: the x axis named under its middle (at its end the name runs into the last tick),
            // tick labels clear of the y axes' end labels, the grid sized to its labels, each extra y axis clear of the
            // labels of the one before it.
            function layout(option){
              for(const x of [].concat(option.xAxis)){ x.nameLocation='middle'; x.nameGap=30; x.axisLabel=Object.assign({margin:12,hideOverlap:true}, x.axisLabel||{}); }
              const ys=[].concat(option.yAxis);
              ys.forEach((y,i)=>{ if(i>1) y.offset=76*(i-1); y.nameLocation='middle'; y.nameRotate=i? -90 : 90;
                y.nameGap=labelWidth(y, option.series.filter(s=>(s.yAxisIndex||0)===i))+16; y.nameTextStyle={color:'#555'}; });
              option.grid=Object.assign({left:38,right:ys.length>2? 50+76*(ys.length-2) : ys.length>1? 50 : 28,bottom:44,containLabel:true}, option.grid||{});
            }
            // About how wide an axis's widest tick label is, px: the largest value it shows, grouped, at 7 px a character.
            function labelWidth(axis, series){ if(axis.max===1) return 28;
              let m=0; for(const s of series) for(const d of s.data||[]) { const v=Math.abs(yOf(d)); if(finite(v)) m=Math.max(m,v); }
              if(axis.type==='log') m=Math.pow(10,Math.ceil(Math.log10(m||1)));
              return 7*Math.max(3, Math.round(m).toLocaleString('en-US').length+(m<10?2:0)); }
            // A point with no neighbour draws no line: it needs its symbol to be seen (a run shorter than a second has one).
            function isolated(y){return y.some((v,i)=>finite(v) && !finite(y[i-1]) && !finite(y[i+1]));}
            function line(name, x, y, extra){return Object.assign({name:name,type:'line',showSymbol:isolated(y),data:x.map((v,i)=>[v,y[i]]),connectNulls:false}, extra||{});}
            const META_KEYS=['date','backend','model_id','tokenizer_id','infersim_base_url','infersim_endpoint','num_prompts','request_rate','burstiness','max_concurrency','infersim_load_mode','infersim_warmup','infersim_max_send_lag_ms','infersim_demo_time_scale','duration','completed','failed','infersim_cancelled','infersim_sent','total_input_tokens','total_output_tokens','infersim_dataset','infersim_workload','infersim_version','infersim_machine','infersim_valid','infersim_invalid_reasons','infersim_validity','infersim_findings','infersim_baseline','infersim_send_lag_ms','infersim_read_delay_ms','infersim_ground_truth','infersim_errors','infersim_prompt_token_mismatches'];
            function metadata(r){let h='<table>'; for(const k of META_KEYS){ if(k in r) h+='<tr><th>'+key(k)+'</th><td>'+esc(fmt(r[k]))+'</td></tr>'; }
              for(const k of Object.keys(r)){ if(!k.startsWith('infersim_')&&!META_KEYS.includes(k)&&!/_ms$|throughput|goodput|tokens|max_concurrent/.test(k)) h+='<tr><th>'+key(k)+'</th><td>'+esc(fmt(r[k]))+'</td></tr>'; }
              return h+'</table>';}
            const LATENCY=/^(mean|median|std|p[0-9.]+)_(ttft|tpot|itl|e2el)_ms$/;
            // With no completed request the result has 0 for every latency (as vLLM's has): that is no latency, not 0 ms.
            function noLatency(r){return r.completed===0;}
            // Each percentile with its 95% confidence interval (infersim_percentile_ci95_ms; '?' where the run cannot bound it).
            function withInterval(r, k){ const ci=(r.infersim_percentile_ci95_ms||{})[k];
              return ci? fmt(r[k])+' (95% CI '+fmt(ci[0])+'-'+(ci[1]===null?'?':fmt(ci[1]))+')' : fmt(r[k]); }
            function summary(r){const keys=Object.keys(r).filter(k=>LATENCY.test(k)||/throughput$|goodput$/.test(k));
              return '<table>'+keys.map(k=>'<tr><th>'+key(k)+'</th><td>'+esc(LATENCY.test(k)&&noLatency(r)? '-' : withInterval(r,k))+'</td></tr>').join('')+'</table>';}
            function runSection(r, i){
              const label = DATA.runs.length>1 ? ' (point '+(i+1)+': rate '+r.request_rate+', concurrency '+fmt(r.max_concurrency)+')' : '';
              el('h2','Run'+label);
              if('infersim_valid' in r) el('p', r.infersim_valid ? '<span class="ok">Valid run</span>' : '<span class="bad">INVALID: '+esc((r.infersim_invalid_reasons||[]).join('; '))+'</span>');
              if(noLatency(r)) el('p', 'No request completed ('+esc(fmt(r.failed))+' failed): there are no latencies to show.', 'bad');
              const g=el('div','', 'grid'); const a=document.createElement('div'); a.innerHTML=metadata(r); g.appendChild(a); const b=document.createElement('div'); b.innerHTML=summary(r); g.appendChild(b);
              const c=r.infersim_percentile_curves;
              if(c){ const p=c.percentiles.map(x=>String(x));
                chart({title:{text:'Latency distribution (value at percentile)'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},
                  xAxis:{type:'category',data:p,name:'percentile, %'},yAxis:{type:'log',name:'latency, ms (log)'},
                  series:['ttft_ms','tpot_ms','itl_ms','icl_ms','e2el_ms','send_lag_ms'].map(k=>({name:k.replace('_ms','').toUpperCase(),type:'line',data:c[k].map(v=>v>0?v:null)}))}); }
              const t=r.infersim_timeseries;
              if(t){ const mid=t.time_s.map((s,i)=>s+t.bucket_s[i]/2), rate=a=>a.map((v,i)=>v/t.bucket_s[i]);
                chart({title:{text:'Latency over time (mean of requests finishing each second)'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},
                  xAxis:{type:'value',name:'time since the start, s'},yAxis:{type:'value',name:'mean latency, ms'},series:[line('TTFT',mid,t.mean_ttft_ms),line('E2EL',mid,t.mean_e2el_ms)]});
                chart({title:{text:'Throughput over time'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},xAxis:{type:'value',name:'time since the start, s'},
                  yAxis:[{type:'value',name:'requests, req/s'},{type:'value',name:'output, tokens/s'}],
                  series:[line('sent req/s',mid,rate(t.sent)),line('completed req/s',mid,rate(t.completed)),line('output tok/s',mid,rate(t.output_tokens),{yAxisIndex:1})]}); }
              const m=r.infersim_server_metrics;
              if(m && m.time_s && m.time_s.length){ chart({title:{text:'Server metrics ('+m.url+')'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},xAxis:{type:'value',name:'time since the start, s'},
                  yAxis:[{type:'value',name:'running, waiting: requests',minInterval:1},{type:'value',name:'KV cache in use, share (0-1)',min:0,max:1}],
                  series:[line('running',m.time_s,m.num_requests_running),line('waiting',m.time_s,m.num_requests_waiting),line('kv_cache_usage_perc',m.time_s,m.kv_cache_usage_perc,{yAxisIndex:1})]}); }
              else if(r.infersim_base_url) { el('p','No server metrics scraped (use --scrape-metrics URL).'); }
              if(r.infersim_replicas) fleetChart(r);
            }
            // A fleet's replica counts (step functions, held to the end of the run) and its latency per send-time bucket,
            // on one time axis: how a scaling decision shows in latency a cold start later.
            function fleetChart(r){ const rep=r.infersim_replicas, lot=r.infersim_latency_over_time;
              const last=a=>a[a.length-1], bucketEnd=lot&&lot.time_s.length? last(lot.time_s)+lot.interval_s : 0;
              const end=Math.max(last(rep.time_s), bucketEnd);
              const stepped=k=>rep.time_s.map((t,i)=>[t,rep[k][i]]).concat([[end,last(rep[k])]]);
              const series=[{name:'ready replicas',type:'line',step:'end',showSymbol:false,data:stepped('ready')},
                {name:'desired replicas',type:'line',step:'end',showSymbol:false,lineStyle:{type:'dashed'},data:stepped('desired')}];
              const yAxis=[{type:'value',name:'replicas',minInterval:1}];
              if(lot){ const mid=lot.time_s.map(t=>t+lot.interval_s/2);
                yAxis.push({type:'log',name:'TTFT, ms (log)'});
                series.push(line('mean TTFT',mid,lot.mean_ttft_ms,{yAxisIndex:1}),line('max TTFT',mid,lot.max_ttft_ms,{yAxisIndex:1}));
                if(lot.slo_attainment.some(finite)){ yAxis.push({type:'value',name:'SLO attainment, share (0-1)',min:0,max:1});
                  series.push(line('SLO attainment',mid,lot.slo_attainment,{yAxisIndex:2})); } }
              chart({title:{text:'Replicas and latency over time'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},
                xAxis:{type:'value',name:'time since the start, s'},yAxis:yAxis,series:series}); }
            // A sweep's load axis in words with its unit.
            const LOAD_AXIS={request_rate:'offered request rate, req/s', max_concurrency:'concurrency, requests in flight'};
            const LOAD_WORDS={request_rate:'request rate', max_concurrency:'concurrency'};
            // A run flagged invalid is drawn as such (an open grey circle) and left out of every line: its numbers are the
            // client's as much as the server's, and its goodput is no goodput.
            const INVALID={name:'run flagged invalid',type:'scatter',symbol:'emptyCircle',symbolSize:9,color:'#888',z:5};
            function sweepSection(s){ const pts=s.points, ok=p=>p.infersim_valid!==false, lat=(p,k)=>noLatency(p)||!ok(p)? null : p[k];
              const bad=pts.filter(p=>!ok(p)), loadAxis=LOAD_AXIS[s.mode]||s.mode.replace(/_/g,' ');
              el('h2','Sweep over '+esc(LOAD_WORDS[s.mode]||s.mode.replace(/_/g,' '))+': knee and goodput');
              const between=iv=>iv? ' (95%: between '+esc(iv[0]===null?'below the lightest load':fmt(iv[0]))+' and '+esc(fmt(iv[1]))+')' : '';
              el('p','Saturation knee: '+esc(fmt(s.knee_load))+between(s.knee_load_interval)+' ('+esc(s.knee_reason)+'). Highest load meeting the goodput SLO: '
                +esc(fmt(s.max_load_meeting_slo))+between(s.max_load_meeting_slo_interval)+'.'
                +(bad.length? ' Runs flagged invalid ('+bad.length+', at '+bad.map(p=>fmt(p.load)).join(', ')+') are drawn as open grey circles and left out of the lines and of goodput.' : ''));
              const x=pts.map(p=>p.load);
              const COLORS={'median TTFT':'#5470c6','p99 TTFT':'#91cc75','median TPOT':'#fac858','p99 E2EL':'#ee6666'};
              const curves=[['median TTFT','median_ttft_ms'],['p99 TTFT','p99_ttft_ms'],['median TPOT','median_tpot_ms'],['p99 E2EL','p99_e2el_ms']];
              const bands=curves.map(([n,k])=>infersimBand(n+' 95% CI',pts.filter(p=>ok(p)&&!noLatency(p)&&p[k+'_ci95']).map(p=>[p.load,p[k+'_ci95'][0],p[k+'_ci95'][1]]),COLORS[n]))
                .filter(b=>b.data.length>1);
              const invalidAt=k=>bad.length? [Object.assign({},INVALID,{data:bad.filter(p=>finite(p[k])).map(p=>[p.load,p[k]])})] : [];
              chart({title:{text:'Latency vs offered load (bands: 95% confidence intervals)'},tooltip:{trigger:'axis'},legend:{top:24,data:curves.map(c=>c[0]).concat(bad.length?[INVALID.name]:[])},grid:{top:60},
                xAxis:{type:'value',name:loadAxis},yAxis:{type:'log',name:'latency, ms (log)'},
                series:curves.map(([n,k])=>line(n,x,pts.map(p=>lat(p,k)),{showSymbol:true,color:COLORS[n]})).concat(bands).concat(invalidAt('p99_ttft_ms'))});
              chart({title:{text:'Throughput vs latency'},tooltip:{trigger:'item'},legend:{top:24},grid:{top:60},xAxis:{type:'value',name:'TTFT p99, ms'},yAxis:{type:'value',name:'output throughput, tokens/s'},
                series:[{name:'points (labelled with their load)',type:'line',data:pts.filter(p=>ok(p)&&!noLatency(p)).map(p=>[p.p99_ttft_ms,p.output_throughput,p.load]),label:{show:true,formatter:d=>String(d.data[2])}}]
                  .concat(bad.length? [Object.assign({},INVALID,{data:bad.filter(p=>!noLatency(p)).map(p=>[p.p99_ttft_ms,p.output_throughput])})] : [])});
              chart({title:{text:'Achieved vs offered load'},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:60},xAxis:{type:'value',name:loadAxis},yAxis:{type:'value',name:'throughput, req/s'},
                series:[line('request throughput',x,pts.map(p=>ok(p)?p.request_throughput:null),{showSymbol:true}),
                  line('request goodput',x,pts.map(p=>ok(p)?p.request_goodput:null),{showSymbol:true})].concat(invalidAt('request_throughput'))});
            }
            if(DATA.sweep){ try { sweepSection(DATA.sweep); } catch(e){ reportError('sweep', e); } }
            DATA.runs.forEach((r,i)=>{ try { runSection(r,i); } catch(e){ reportError('run '+(i+1), e); } });
            </script></body></html>
            """;
}
