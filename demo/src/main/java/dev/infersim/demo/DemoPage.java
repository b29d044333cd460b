package dev.infersim.demo;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.report.HtmlReport;
import dev.infersim.common.ConfigException;
import dev.infersim.sim.Timeline;

import java.nio.file.Path;

/**
 * The demo's page: one story told in order, for a class. The workload and the time scale the calibration chose (and
 * why); what the engine can do (step time against batch,
 * KV capacity); latency, throughput and queue against offered load, measured (points with their 95% intervals),
 * simulated (a dense curve of replications with its band) and predicted (a curve up to its asymptote) on the same axes
 * in model time, latencies on log axes so the knee's bend shows, each method's knee a legend entry with its value and
 * interval, the TTFT objective marked and the prediction saying "unstable" past its knee; whether the conclusions are
 * stable; where the three disagree and why; a timeline of one simulated run near the knee, each series on an axis
 * of its own unit; and the closed loop ({@link DemoClosedLoop}): throughput and mean latency against concurrency,
 * simulated and predicted, with Little's law's X R beside each N. Self-contained (the charting library and the data are
 * inlined), so it opens offline.
 */
final class DemoPage {
    /**
     * What the page tells beside the comparison: the workload in words, the engine (null under fixed timing, which
     * {@code timing} then describes), one run's timeline, metadata.
     */
    record Story(String workload, EngineSummary engine, String timing, KneeTimeline kneeTimeline,
                 ObjectNode metadata) {
    }

    /** The timeline of the simulated run nearest the knee, and its rate. */
    record KneeTimeline(@JsonUnwrapped Timeline.Columns columns, @JsonProperty("request_rate") double requestRate) {
    }

    /** What the page draws: the story and the comparison. */
    private record Data(String workload, EngineSummary engine, String timing, DemoResult comparison,
                        KneeTimeline timeline, ObjectNode metadata) {
    }

    private DemoPage() {
    }

    static void write(Path file, DemoResult result, Story story) {
        Data data = new Data(story.workload(), story.engine(), story.timing(), result, story.kneeTimeline(),
                story.metadata());
        try {
            HtmlReport.writePage(file, TEMPLATE, data);
        } catch (ConfigException e) {
            throw new ConfigException("--html: " + e.getMessage(), e);
        }
    }

    private static final String TEMPLATE = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>infersim demo: where the queue takes off</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:24px auto;color:#222;max-width:1100px;line-height:1.45;padding:0 12px}
            h1{font-size:24px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
            .chart{width:100%;height:340px} .wide{height:460px} .pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px}
            table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
            th:first-child,td:first-child{text-align:left} .note{margin:4px 0} .report-error{color:#fff;background:#b00;padding:4px 8px}
            .lead{font-size:15px} .stable{color:#070;font-weight:bold} .unstable{color:#b00;font-weight:bold} .muted{color:#666}
            </style>
            <script>
            function reportError(where, e){const p=document.createElement('p'); p.className='report-error';
              p.textContent='Report error in '+where+': '+((e&&e.message)||e); document.body.appendChild(p);}
            window.addEventListener('error', ev=>reportError('script', ev.message));
            </script>
            <script>%ECHARTS%</script></head><body>
            <h1>Measured, simulated, predicted: where the queue takes off</h1>
            <p class="lead" id="lead"></p>
            <h2>1. The workload</h2><p id="workload"></p><p id="calibration"></p>
            <h2 id="engine-title">2. What the engine can do</h2><p id="engine-words"></p>
            <div class="pair" id="engine-charts"><div class="chart" id="chart-decode"></div><div class="chart" id="chart-prefill"></div></div>
            <h2>3. Offered load against latency, throughput and queue</h2><p id="sweep-words"></p>
            <div class="chart wide" id="chart-ttft-p99"></div><div id="knees"></div><p id="stability"></p>
            <div class="pair"><div class="chart" id="chart-ttft-p50"></div><div class="chart" id="chart-tpot"></div></div>
            <div class="pair"><div class="chart" id="chart-throughput"></div><div class="chart" id="chart-waiting"></div></div>
            <h2>4. Where they disagree, and why</h2><div id="table"></div><ul id="notes"></ul>
            <h2>5. One run near the knee</h2><p id="timeline-words"></p><div class="chart" id="chart-timeline"></div>
            <h2>6. A closed loop: throughput and latency against concurrency</h2><p id="closed-words"></p>
            <div class="chart wide" id="chart-closed-loop"></div><div id="closed-table"></div>
            <h2>About this run</h2><div id="metadata"></div>
            <script>
            const DATA = %DATA%;
            const C = DATA.comparison, E = DATA.engine, rows = C.rows;
            const METHODS = [['measured','#1f77b4','solid'],['simulated','#d95f02','dashed'],['predicted','#1b9e77','dotted']];
            const COLOR = Object.fromEntries(METHODS.map(([m,c])=>[m,c]));
            function $(id){return document.getElementById(id);}
            function esc(v){return String(v).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
            function finite(v){return typeof v==='number' && Number.isFinite(v);}
            // Numbers for people: three significant figures, thousands grouped, '-' for none.
            function n(v){ if(!finite(v)) return '-';
              const a=Math.abs(v), d=a>=100?0:a>=10?1:a>=1?2:3; return v.toLocaleString('en-US',{maximumFractionDigits:d,minimumFractionDigits:0}); }
            function interval(ci){ return ci ? ' (95% CI '+(finite(ci[0])&&ci[0]>0?n(ci[0]):'?')+'\u2013'+(finite(ci[1])?n(ci[1]):'?')+')' : ''; }
            // Tick labels clear of the y axes' end labels (a right axis's 0 sits beside the x axis's last tick). Every axis is
            // named in words with its unit: the y axes' names run along them, beyond their widest tick label, and the grid
            // leaves them room (containLabel makes room for the tick labels only).
            function draw(id, option){ try { for(const x of [].concat(option.xAxis)) x.axisLabel=Object.assign({margin:12}, x.axisLabel||{});
                const ys=[].concat(option.yAxis);
                ys.forEach((y,i)=>{ y.nameLocation='middle'; y.nameRotate=i? -90 : 90; y.nameGap=y.nameGap||labelWidth(y)+22;
                  y.nameTextStyle=Object.assign({color:'#555'}, y.nameTextStyle||{}); });
                // containLabel reserves the tick labels and their margin; the name's far edge lies within its gap of the axis
                // plus half its line, so the gap itself is always room enough
                option.grid=Object.assign({}, option.grid, {left:(option.grid.left||0)+ys[0].nameGap, right:(option.grid.right||0)+(ys.length>1?ys[1].nameGap:0)});
                const c=echarts.init($(id), null, {renderer:'svg'}); option.animation=false; c.setOption(option); return c; }
              catch(e){ reportError('chart '+id, e); } }
            // An axis maximum people read: 1, 2, 2.5, 5 or 10 times a power of ten, at or above the data.
            function niceMax(v){ if(!(v>0)) return 1; const p=Math.pow(10,Math.floor(Math.log10(v)));
              for(const m of [1,2,2.5,5,10]) if(m*p>=v) return m*p; return 10*p; }
            // About how wide an axis's widest tick label is, px: its largest value, grouped, at 7 px a character. The name's
            // gap (to its middle) adds the labels' margin (8 px) and half the name's line (7 px), and a little air.
            function labelWidth(axis){ return Math.ceil(7*n(axis.max||(axis.type==='log'?100000:1000)).length); }
            const knee = C.knee_rate_per_s, kneeCi = C.knee_rate_ci95, slo = C.highest_rate_meeting_slo, sloCi = C.highest_rate_meeting_slo_ci95;
            $('lead').textContent = 'The same workload three ways: a benchmark client measuring the mock server over HTTP, '
              + 'the discrete-event simulator replaying the same requests, and the queueing model in closed form. '
              + 'Below the knee latency rises gently; at the knee the engine runs out of capacity and the queue, and with it the latency, '
              + 'takes off, while throughput stays near capacity.';
            $('workload').textContent = DATA.workload;
            if(C.calibration) $('calibration').textContent = C.calibration.words;
            if(!E){ $('engine-title').textContent = '2. The timing'; $('engine-words').textContent = DATA.timing; $('engine-charts').remove(); }
            else {
            $('engine-words').textContent = 'One decode step serves every running sequence, and its time grows far slower than the batch: '
              + 'at '+n(E.context_tokens)+' tokens of context a batch of 1 takes '+n(E.decode_step_ms[0])+' ms per step ('+n(E.decode_tokens_per_s[0])
              + ' tokens/s), a batch of '+E.decode_batch[E.decode_batch.length-1]+' takes '+n(E.decode_step_ms[E.decode_step_ms.length-1])+' ms ('
              + n(E.decode_tokens_per_s[E.decode_tokens_per_s.length-1])+' tokens/s). So the fuller the batch, the more the engine serves: '
              + 'its capacity grows with the queue until the batch is full. The KV cache holds '+n(E.kv_cache_tokens)+' tokens ('
              + n(E.kv_cache_blocks)+' blocks), about '+n(E.max_concurrent_sequences_at_context)+' sequences of that length at once.';
            draw('chart-decode', {title:{text:'Decode step time and token rate vs batch size',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},legend:{top:26},
              grid:{top:70,left:16,right:16,bottom:40,containLabel:true},
              xAxis:{type:'log',logBase:2,name:'batch (sequences)',nameLocation:'middle',nameGap:28},
              yAxis:[{type:'value',name:'decode step, ms',min:0,max:niceMax(Math.max(...E.decode_step_ms))},
                {type:'value',name:'decode rate, tokens/s',min:0,max:niceMax(Math.max(...E.decode_tokens_per_s))}],
              series:[{name:'step time, ms',type:'line',data:E.decode_batch.map((b,i)=>[b,E.decode_step_ms[i]])},
                      {name:'tokens/s',type:'line',yAxisIndex:1,data:E.decode_batch.map((b,i)=>[b,E.decode_tokens_per_s[i]])}]});
            draw('chart-prefill', {title:{text:'Prefill step time vs prompt length',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},legend:{top:26},
              grid:{top:70,left:16,right:24,bottom:40,containLabel:true},
              xAxis:{type:'log',logBase:2,name:'prompt tokens',nameLocation:'middle',nameGap:28},yAxis:{type:'value',name:'prefill step, ms',min:0,max:niceMax(Math.max(...E.prefill_step_ms))},
              series:[{name:'prefill, ms',type:'line',data:E.prefill_tokens.map((t,i)=>[t,E.prefill_step_ms[i]])}]});
            }

            const sim = C.simulated_curve, pred = C.predicted_curve;
            const valid = rows.filter(r=>r.measured_valid), invalid = rows.filter(r=>!r.measured_valid);
            const maxRate = Math.max(...rows.map(r=>r.request_rate), ...sim.map(p=>p.request_rate));
            const xMax = Math.ceil(maxRate*1.05/5)*5;
            const reps = sim.length ? sim[0].replications : 0;
            $('sweep-words').textContent = 'Each measured point is one run of the benchmark client, its bar the 95% confidence interval of the value '
              + '(sectioning over the run\\'s requests, so correlated latencies widen it; a dotted bar with no top: too few requests beyond the p99 to bound it). The simulated curve is the mean of '+reps+' runs with their own seeds '
              + 'at every rate, its band the 95% confidence interval of that mean. The prediction is a curve up to its asymptote at the predicted knee: past it '
              + 'the queue has no steady state and the model says "unstable" instead of inventing numbers. Latency axes are logarithmic, so the bend at the knee '
              + 'reads at a glance. Measured points are joined only below the knee: past it each run stands alone, as nothing between two '
              + 'overloaded rates was measured. The vertical line marks each method\\'s knee; where they lie too close to draw apart, one '
              + 'line stands for them all and its entry under the chart gives each value. Each method\\'s interval is shaded.';
            function kneeName(m){ return m+' knee '+n(knee[m])+' req/s'+(m==='predicted'?'':interval(kneeCi[m])); }
            // Knees closer than this share of the x axis cannot be told apart as lines: they share one marker.
            const KNEE_APART = 0.025;
            function kneeGroups(){ const found=METHODS.filter(([m])=>finite(knee[m])).sort((a,b)=>knee[a[0]]-knee[b[0]]), groups=[];
              for(const k of found){ const g=groups[groups.length-1];
                if(g && knee[k[0]]-knee[g[g.length-1][0]] < KNEE_APART*xMax) g.push(k); else groups.push([k]); }
              return groups; }
            // One series per marker: a knee alone is a line in its method's style, named with its value and interval; knees
            // too close to tell apart are one grey line named with every value. Each method's interval is shaded.
            function kneeSeries(withNames){ return kneeGroups().map(g=>{
              const one=g.length===1, [m,c,t]=g[0], x=g.reduce((a,[k])=>a+knee[k],0)/g.length;
              const name=one? (withNames?kneeName(m):m+' knee') : (withNames? 'knees, req/s: '+g.map(([k])=>k+' '+n(knee[k])).join(' \u00b7 ') : 'knees');
              const color=one? c : '#444', type=one? t : 'solid';
              const shades=g.map(([k,kc])=>[kneeCi[k],kc]).filter(([ci])=>ci&&finite(ci[0])&&finite(ci[1])&&ci[1]>ci[0]);
              return {name:name, type:'line', data:[], color:color, lineStyle:{type:type,width:2},
                markLine:{symbol:'none',silent:true,label:{show:false},lineStyle:{color:color,type:type,width:2},data:[{xAxis:x}]},
                markArea: shades.length? {silent:true,data:shades.map(([ci,kc])=>[{xAxis:ci[0],itemStyle:{color:infersimRgba(kc,0.10)}},{xAxis:ci[1]}])} : undefined}; }); }
            function unstableArea(){ return finite(knee.predicted) && knee.predicted<xMax ? {silent:true,itemStyle:{color:'rgba(120,120,120,0.07)'},
              label:{show:true,formatter:'prediction: unstable',position:'insideBottomRight',color:'#555',fontSize:11,distance:8},
              data:[[{xAxis:knee.predicted},{xAxis:xMax}]]} : undefined; }
            // The three methods on one metric. key: the sides' key; ci: its interval's key, or null.
            function methodSeries(key, ci, log){
              const keep = v=>finite(v) && (!log || v>0) ? v : null;
              const out = [];
              out.push({name:'predicted',type:'line',color:COLOR.predicted,lineStyle:{type:'dotted',width:2},showSymbol:false,z:2,
                data:pred.map(p=>[p.request_rate, keep(p[key])])});
              if(ci) out.push(infersimBand('simulated 95% band', sim.map(p=>[p.request_rate, p[ci]&&p[ci][0], p[ci]&&p[ci][1]]), COLOR.simulated));
              out.push({name:'simulated',type:'line',color:COLOR.simulated,lineStyle:{type:'dashed',width:2},showSymbol:false,z:2,
                data:sim.map(p=>[p.request_rate, keep(p[key])])});
              if(ci) out.push(infersimErrorBars('measured 95% CI', valid.map(r=>[r.request_rate, r.measured[ci]&&r.measured[ci][0], r.measured[ci]&&r.measured[ci][1]]), COLOR.measured));
              // joined only between runs below the knee (the lowest of the three; a run's own overloaded flag where no
              // method found one): between two overloaded rates nothing was measured, and a noisy run below the knee
              // that served a little under its rate is still on the curve
              const joined = [], firstKnee = Math.min(...METHODS.map(([m])=>knee[m]).filter(finite));
              const past = r => finite(firstKnee) ? r.request_rate > firstKnee : r.measured.overloaded;
              valid.forEach((r,i)=>{ joined.push([r.request_rate, keep(r.measured[key])]);
                const next=valid[i+1]; if(next && (past(r) || past(next))) joined.push([(r.request_rate+next.request_rate)/2, null]); });
              out.push({name:'measured',type:'line',color:COLOR.measured,symbolSize:7,z:4,connectNulls:false,data:joined});
              if(invalid.length) out.push({name:'measured, run flagged invalid',type:'scatter',color:'#999',symbol:'emptyCircle',symbolSize:8,z:4,
                data:invalid.map(r=>[r.request_rate, keep(r.measured[key])])});
              return out;
            }
            const LEGEND = ['measured','simulated','predicted','measured, run flagged invalid'];
            function sweepChart(id, title, key, ci, unit, log, extra, axisName){
              const series = methodSeries(key, ci, log).concat(kneeSeries(id==='chart-ttft-p99'));
              series[0].markArea = unstableArea();
              if(extra) extra(series);
              const kneeLegend = id==='chart-ttft-p99' ? [{data:series.filter(s=>/^(\\w+ knee |knees, )/.test(s.name)).map(s=>s.name),bottom:4,itemGap:18}] : [];
              return draw(id, {title:{text:title,textStyle:{fontSize:14}},tooltip:{trigger:'axis',valueFormatter:v=>n(v)+' '+unit},
                legend:[{data:LEGEND.filter(l=>series.some(s=>s.name===l)),top:26}].concat(kneeLegend),
                grid:{top:70,left:16,right:28,bottom:kneeLegend.length?66:36,containLabel:true},
                xAxis:{type:'value',name:'offered rate, req/s',nameLocation:'middle',nameGap:26,min:0,max:xMax},
                yAxis:Object.assign({name:axisName+', '+unit+(log?' (log)':'')}, log?Object.assign({type:'log'},logRange(series, id==='chart-ttft-p99'?[C.slo_ttft_p99_ms]:[])):{type:'value',min:0,max:niceMax(dataMax(series))}),
                series:series}); }
            // The largest value measured, simulated or predicted on a chart.
            function dataMax(series){ let m=0; for(const s of series) if(/^(measured|simulated|predicted)$/.test(s.name))
                for(const d of s.data) if(finite(d[1])) m=Math.max(m,d[1]); return m; }
            // A log axis spans the decades of what was measured and simulated (intervals and the objective included); the
            // prediction, which grows without bound at its asymptote, leaves through the top instead of squashing the rest.
            function logRange(series, extra){
              const v = extra.slice();
              for(const s of series){ if(/^(measured|simulated)/.test(s.name)) for(const d of s.data) for(const y of d.slice(1)) if(finite(y)&&y>0) v.push(y); }
              if(!v.length) return {};
              return {min:Math.pow(10,Math.floor(Math.log10(Math.min(...v)))), max:Math.pow(10,Math.ceil(Math.log10(Math.max(...v))))};
            }
            sweepChart('chart-ttft-p99','TTFT p99 vs offered rate','p99_ttft_ms','p99_ttft_ms_ci95','ms',true, s=>{ s[0].markLine={symbol:'none',silent:true,
              data:[{yAxis:C.slo_ttft_p99_ms,lineStyle:{type:'dashed',color:'#900'},label:{formatter:'objective '+n(C.slo_ttft_p99_ms)+' ms',position:'insideStartTop',color:'#900'}}]}; }, 'TTFT p99');
            sweepChart('chart-ttft-p50','TTFT p50 vs offered rate','median_ttft_ms','median_ttft_ms_ci95','ms',true, null, 'TTFT p50');
            sweepChart('chart-tpot','TPOT p50 vs offered rate','median_tpot_ms','median_tpot_ms_ci95','ms',true, null, 'TPOT p50');
            sweepChart('chart-throughput','Requests completed (second half of each run) vs offered rate','completed_request_rate',null,'req/s',false, s=>{
              // past its knee the closed form completes at capacity: its curve continues flat
              const p=s.find(x=>x.name==='predicted'); rows.filter(r=>r.predicted.saturated).forEach(r=>p.data.push([r.request_rate,r.predicted.completed_request_rate]));
              // below the knee every request offered completes: the diagonal is where a method keeps up
              s[0].markLine={symbol:'none',silent:true,lineStyle:{type:'dotted',color:'#999'},label:{show:false},data:[[{coord:[0,0]},{coord:[xMax,xMax]}]]}; },
              'completed');
            sweepChart('chart-waiting','Requests waiting vs offered rate','mean_requests_waiting',null,'requests',true, null, 'waiting');
            const st = C.stability;
            $('knees').innerHTML = '<table><tr><th></th>'+METHODS.map(([m])=>'<th>'+m+'</th>').join('')+'</tr>'
              + '<tr><td>knee (capacity), req/s</td>'+METHODS.map(([m])=>'<td>'+(finite(knee[m])?n(knee[m])+(m==='predicted'?'':interval(kneeCi[m])):'not reached')+'</td>').join('')+'</tr>'
              + '<tr><td>highest rate with TTFT p99 &le; '+n(C.slo_ttft_p99_ms)+' ms, req/s</td>'+METHODS.map(([m])=>'<td>'+(finite(slo[m])?n(slo[m])+(m==='predicted'?'':interval(sloCi[m])):'none')+'</td>').join('')+'</tr>'
              + '<tr><td>long simulation, req/s served</td><td colspan="3">'+n(C.simulated_saturation_rate_per_s)+'</td></tr></table>';
            $('stability').innerHTML = st ? '<span class="'+(st.stable?'stable':'unstable')+'">'+esc(st.words)+'</span>' : '';

            const cols = [['TTFT p50, ms','median_ttft_ms'],['TTFT p99, ms','p99_ttft_ms'],['TPOT p50, ms','median_tpot_ms'],['completed req/s','completed_request_rate'],['waiting','mean_requests_waiting']];
            let t = '<table><tr><th>rate, req/s</th>'+cols.map(c=>'<th>'+c[0]+'<br>measured / simulated / predicted</th>').join('')+'<th>measured TTFT p99, 95% CI</th></tr>';
            for(const r of rows){ t += '<tr><td>'+n(r.request_rate)+' ('+Math.round(100*r.fraction_of_predicted_saturation)+'%)'
                + (r.added_because?' <span class="muted" title="'+esc(r.added_because)+'">(added)</span>':'')
                + (r.measured_valid?'':' <span title="'+esc(r.measured_invalid_reasons.join('; '))+'">(measured run invalid)</span>')+'</td>'
                + cols.map(c=>'<td>'+METHODS.map(([m])=>r[m][c[1]]===null&&m==='predicted'?'unstable':n(r[m][c[1]])).join(' / ')+'</td>').join('')
                + '<td>'+esc(interval(r.measured.p99_ttft_ms_ci95).replace(/^ \\(95% CI |\\)$/g,'')||'-')+'</td></tr>'; }
            $('table').innerHTML = t+'</table>';
            $('notes').innerHTML = (C.notes.length? C.notes : ['All three agree within 10% at every rate below the knee.']).map(x=>'<li class="note">'+esc(x)+'</li>').join('');

            const T = DATA.timeline;
            if(T){
              $('timeline-words').textContent = 'The simulated run at '+n(T.request_rate)+' req/s, the measured rate closest to the knee, over its model time: '
                + 'sequences running in the batch and requests waiting for the engine (left axis), the KV cache in use (KV %, right axis)'
                + (E ? ' and the tokens each engine step processes (grey, far right axis: steps with a prefill spike above the decode steps\\' one token per sequence).' : '.');
              const at = k=>T.time_s.map((s,i)=>[s,T[k][i]]);
              const yAxis=[{type:'value',name:'requests',minInterval:1},
                {type:'value',name:'KV cache in use, %',min:0,max:100,position:'right'}];
              const series=[{name:'running',type:'line',showSymbol:false,data:at('running')},{name:'waiting',type:'line',showSymbol:false,data:at('waiting')},
                        {name:'KV cache %',type:'line',showSymbol:false,yAxisIndex:1,data:T.time_s.map((s,i)=>[s,100*T.kv_cache_usage[i]])}];
              if(E){ yAxis.push({type:'value',name:'tokens per step',position:'right',offset:64,nameGap:48,splitLine:{show:false}});
                series.push({name:'tokens per step',type:'line',showSymbol:false,yAxisIndex:2,color:'#bbb',lineStyle:{width:1},z:1,data:at('batch_tokens')}); }
              draw('chart-timeline', {title:{text:'Engine state over time, one run near the knee',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},legend:{top:26},
                grid:{top:70,left:16,right:E?48:16,bottom:36,containLabel:true},
                xAxis:{type:'value',name:'model time, s',nameLocation:'middle',nameGap:26},yAxis:yAxis,series:series});
            } else { $('timeline-words').textContent = 'No run was simulated.'; }
            const L = C.closed_loop;
            if(L){
              const pts = L.points;
              $('closed-words').textContent = 'N clients, each sending its next request the moment its last one ends (vllm bench --max-concurrency N '
                + '--request-rate inf), simulated (same engine, virtual time) and predicted (predict --max-concurrency N). Up to the batch the engine '
                + 'sustains ('+L.batch_limit+' sequences) every client adds throughput at little cost in latency; past it the extra clients only queue: '
                + 'throughput stays flat and latency grows in proportion to N. Little\\'s law for a closed loop, N = X \u00d7 R (throughput times mean E2EL), '
                + 'holds in the simulation within '+n(100*L.littles_law_tolerance)+'% at every N (last column); the prediction is held within '
                + n(100*L.prediction_tolerance)+'% of the simulation.';
              // The prediction lies on the simulation: the simulated lines are drawn wide and pale with filled points, the
              // predicted ones thin on top with open diamonds, so both show where they meet.
              const line = (name, m, key, axis, type) => Object.assign({name:name, type:'line', yAxisIndex:axis, color:COLOR[m],
                data:pts.map(p=>[p.max_concurrency, p[m][key]])}, m==='simulated'
                ? {symbol:'circle', symbolSize:13, z:2, itemStyle:{opacity:0.6}, lineStyle:{type:type,width:6,opacity:0.45}}
                : {symbol:'emptyDiamond', symbolSize:8, z:3, lineStyle:{type:type,width:1.5}});
              const series = [];
              for(const [m] of METHODS.slice(1)){
                series.push(line('req/s, '+m, m, 'request_throughput', 0, 'solid'), line('E2EL, '+m, m, 'mean_e2el_ms', 1, 'dashed'),
                  line('TTFT, '+m, m, 'mean_ttft_ms', 1, 'dotted'));
              }
              draw('chart-closed-loop', {title:{text:'Throughput and mean latency vs concurrency',textStyle:{fontSize:14}},
                tooltip:{trigger:'axis'},legend:{top:26},grid:{top:70,left:16,right:16,bottom:36,containLabel:true},
                xAxis:{type:'log',logBase:2,name:'concurrency N (clients)',nameLocation:'middle',nameGap:26},
                yAxis:[{type:'value',name:'throughput, req/s',min:0,max:niceMax(Math.max(...pts.map(p=>Math.max(p.simulated.request_throughput,p.predicted.request_throughput))))},
                  {type:'log',name:'mean latency, ms (log)',position:'right',max:Math.pow(10,Math.ceil(Math.log10(Math.max(...pts.map(p=>Math.max(p.simulated.mean_e2el_ms,p.predicted.mean_e2el_ms))))))}],series:series});
              let t = '<table><tr><th>N</th><th>req/s<br>simulated / predicted</th><th>output tokens/s<br>simulated / predicted</th>'
                + '<th>mean E2EL, ms<br>simulated / predicted</th><th>mean TTFT, ms<br>simulated / predicted</th><th>X \u00d7 R, simulated<br>(Little: = N)</th></tr>';
              for(const p of pts){ const pair = k=>n(p.simulated[k])+' / '+n(p.predicted[k]);
                t += '<tr><td>'+p.max_concurrency+'</td><td>'+pair('request_throughput')+'</td><td>'+pair('output_throughput')+'</td><td>'
                  + pair('mean_e2el_ms')+'</td><td>'+pair('mean_ttft_ms')+'</td><td>'+n(p.simulated.throughput_times_mean_e2el)+'</td></tr>'; }
              $('closed-table').innerHTML = t+'</table>';
            } else { $('closed-words').textContent = 'The closed loop is predicted for the engine model only, so it is not run under fixed timing.';
              $('chart-closed-loop').remove(); }
            $('metadata').innerHTML = '<table>'+Object.entries(DATA.metadata).map(([k,v])=>'<tr><th>'+esc(k)+'</th><td>'+esc(typeof v==='object'?JSON.stringify(v):v)+'</td></tr>').join('')+'</table>';
            </script></body></html>
            """;
}
