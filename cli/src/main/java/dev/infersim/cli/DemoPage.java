package dev.infersim.cli;

import dev.infersim.bench.HtmlReport;
import dev.infersim.engine.ConfigException;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The demo's page: one story told in order, for a class. The workload; what the engine can do (step time against batch,
 * KV capacity); latency, throughput and queue against offered load, measured, simulated and predicted on the same axes in
 * model time, with each method's knee and the TTFT objective marked and the prediction saying "unstable" past its knee;
 * where the three disagree and why; and a timeline of one simulated run near the knee. Self-contained (the charting
 * library and the data are inlined), so it opens offline.
 */
final class DemoPage {
    /**
     * What the page tells beside the comparison: the workload in words, the engine (null under fixed timing, which
     * {@code timing} then describes), one run's timeline, metadata.
     */
    record Story(String workload, EngineSummary engine, String timing, Map<String, Object> kneeTimeline,
                 Map<String, Object> metadata) {
    }

    private DemoPage() {
    }

    static void write(Path file, DemoReport report, Story story) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("workload", story.workload());
        data.put("engine", story.engine() == null ? null : story.engine().toMap());
        data.put("timing", story.timing());
        data.put("comparison", report.toMap());
        data.put("timeline", story.kneeTimeline());
        data.put("metadata", story.metadata());
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
            body{font-family:system-ui,sans-serif;margin:24px auto;color:#222;max-width:1100px;line-height:1.45}
            h1{font-size:24px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
            .chart{width:100%;height:330px} .pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
            table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
            th:first-child,td:first-child{text-align:left} .note{margin:4px 0} .report-error{color:#fff;background:#b00;padding:4px 8px}
            .lead{font-size:15px}
            </style>
            <script>
            function reportError(where, e){const p=document.createElement('p'); p.className='report-error';
              p.textContent='Report error in '+where+': '+((e&&e.message)||e); document.body.appendChild(p);}
            window.addEventListener('error', ev=>reportError('script', ev.message));
            </script>
            <script>%ECHARTS%</script></head><body>
            <h1>Measured, simulated, predicted: where the queue takes off</h1>
            <p class="lead" id="lead"></p>
            <h2>1. The workload</h2><p id="workload"></p>
            <h2 id="engine-title">2. What the engine can do</h2><p id="engine-words"></p>
            <div class="pair" id="engine-charts"><div class="chart" id="chart-decode"></div><div class="chart" id="chart-prefill"></div></div>
            <h2>3. Offered load against latency, throughput and queue</h2><p id="sweep-words"></p>
            <div class="pair"><div class="chart" id="chart-ttft-p50"></div><div class="chart" id="chart-ttft-p99"></div></div>
            <div class="pair"><div class="chart" id="chart-tpot"></div><div class="chart" id="chart-throughput"></div></div>
            <div class="pair"><div class="chart" id="chart-waiting"></div><div id="knees"></div></div>
            <h2>4. Where they disagree, and why</h2><div id="table"></div><ul id="notes"></ul>
            <h2>5. One run near the knee</h2><p id="timeline-words"></p><div class="chart" id="chart-timeline"></div>
            <h2>About this run</h2><div id="metadata"></div>
            <script>
            const DATA = %DATA%;
            const C = DATA.comparison, E = DATA.engine, rows = C.rows;
            const METHODS = [['measured','#1f77b4','solid'],['simulated','#ff7f0e','dashed'],['predicted','#2ca02c','dotted']];
            function $(id){return document.getElementById(id);}
            function esc(v){return String(v).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
            // Numbers for people: three significant figures, thousands grouped, '-' for none.
            function n(v){ if(v===null||v===undefined||!Number.isFinite(v)) return '-';
              const a=Math.abs(v), d=a>=100?0:a>=10?1:a>=1?2:3; return v.toLocaleString('en-US',{maximumFractionDigits:d,minimumFractionDigits:0}); }
            function draw(id, option){ try { const c=echarts.init($(id), null, {renderer:'svg'}); option.animation=false; c.setOption(option); return c; }
              catch(e){ reportError('chart '+id, e); } }
            const knee = C.knee_rate_per_s;
            $('lead').textContent = 'The same workload three ways: a benchmark client measuring the mock server over HTTP, '
              + 'the discrete-event simulator replaying the same requests, and the queueing model in closed form. '
              + 'Below the knee all three rise gently; past it the queue grows without bound while throughput stays flat at capacity.';
            $('workload').textContent = DATA.workload;
            if(!E){ $('engine-title').textContent = '2. The timing'; $('engine-words').textContent = DATA.timing; $('engine-charts').remove(); }
            else {
            $('engine-words').textContent = 'One decode step serves every running sequence, and its time grows far slower than the batch: '
              + 'at '+n(E.context_tokens)+' tokens of context a batch of 1 takes '+n(E.decode_step_ms[0])+' ms per step ('+n(E.decode_tokens_per_s[0])
              + ' tokens/s), a batch of '+E.decode_batch[E.decode_batch.length-1]+' takes '+n(E.decode_step_ms[E.decode_step_ms.length-1])+' ms ('
              + n(E.decode_tokens_per_s[E.decode_tokens_per_s.length-1])+' tokens/s). The KV cache holds '+n(E.kv_cache_tokens)+' tokens ('
              + n(E.kv_cache_blocks)+' blocks), about '+n(E.max_concurrent_sequences_at_context)+' sequences of that length at once.';
            draw('chart-decode', {title:{text:'Decode step time and token rate vs batch size',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:64,right:70},
              xAxis:{type:'log',logBase:2,name:'batch (sequences)',nameLocation:'middle',nameGap:26},yAxis:[{type:'value',name:'step ms'},{type:'value',name:'tokens/s'}],
              series:[{name:'step time, ms',type:'line',data:E.decode_batch.map((b,i)=>[b,E.decode_step_ms[i]])},
                      {name:'tokens/s',type:'line',yAxisIndex:1,data:E.decode_batch.map((b,i)=>[b,E.decode_tokens_per_s[i]])}]});
            draw('chart-prefill', {title:{text:'Prefill step time vs prompt length',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},grid:{top:64},
              xAxis:{type:'log',logBase:2,name:'prompt tokens',nameLocation:'middle',nameGap:26},yAxis:{type:'value',name:'ms'},
              series:[{name:'prefill, ms',type:'line',data:E.prefill_tokens.map((t,i)=>[t,E.prefill_step_ms[i]])}]});
            }

            $('sweep-words').textContent = 'Each point is one request rate. Vertical lines: each method\\'s knee (capacity). '
              + 'The prediction stops at its knee: past it the queue has no steady state, and the model says "unstable" instead of inventing numbers. '
              + 'Dashed horizontal line: the TTFT p99 objective of '+n(C.slo_ttft_p99_ms)+' ms.';
            const maxRate = Math.max(...rows.map(r=>r.request_rate));
            function kneeLines(){ return {symbol:'none',silent:true,label:{formatter:p=>p.name,position:'insideEndTop',fontSize:10},
              data:METHODS.filter(([m])=>knee[m]!==null).map(([m,c])=>({name:m+' knee '+n(knee[m]),xAxis:knee[m],lineStyle:{color:c,type:'solid',width:1}}))}; }
            function unstableArea(){ return knee.predicted!==null && knee.predicted<maxRate ? {silent:true,itemStyle:{color:'rgba(200,0,0,0.06)'},
              label:{formatter:'unstable (predicted)',position:'insideTop',fontSize:11},data:[[{xAxis:knee.predicted},{xAxis:maxRate*1.02}]]} : undefined; }
            function sweepChart(id, title, key, unit, extra){
              const series = METHODS.map(([m,c,t])=>({name:m,type:'line',color:c,lineStyle:{type:t},symbolSize:7,
                data:rows.map(r=>[r.request_rate, r[m][key]])}));
              series[0].markLine = kneeLines(); series[0].markArea = unstableArea();
              if(extra) extra(series);
              return draw(id, {title:{text:title,textStyle:{fontSize:14}},tooltip:{trigger:'axis',valueFormatter:v=>n(v)+' '+unit},legend:{top:24},grid:{top:64,right:24},
                xAxis:{type:'value',name:'offered rate, req/s',nameLocation:'middle',nameGap:26,max:v=>Math.ceil(v.max*1.05)},yAxis:{type:'value',name:unit},series:series}); }
            sweepChart('chart-ttft-p50','TTFT p50 vs offered rate','median_ttft_ms','ms');
            sweepChart('chart-ttft-p99','TTFT p99 vs offered rate','p99_ttft_ms','ms', s=>{ s[1].markLine={symbol:'none',silent:true,
              data:[{name:'objective',yAxis:C.slo_ttft_p99_ms,lineStyle:{type:'dashed',color:'#900'},label:{formatter:'objective '+n(C.slo_ttft_p99_ms)+' ms',position:'insideStartTop'}}]}; });
            sweepChart('chart-tpot','TPOT p50 vs offered rate','median_tpot_ms','ms');
            sweepChart('chart-throughput','Output throughput vs offered rate (steady state)','steady_output_throughput','tokens/s');
            sweepChart('chart-waiting','Requests waiting vs offered rate','mean_requests_waiting','requests');
            const slo = C.highest_rate_meeting_slo;
            $('knees').innerHTML = '<table><tr><th></th>'+METHODS.map(([m])=>'<th>'+m+'</th>').join('')+'</tr>'
              + '<tr><td>knee (capacity), req/s</td>'+METHODS.map(([m])=>'<td>'+(knee[m]===null?'not reached':n(knee[m]))+'</td>').join('')+'</tr>'
              + '<tr><td>highest rate with TTFT p99 &le; '+n(C.slo_ttft_p99_ms)+' ms</td>'+METHODS.map(([m])=>'<td>'+(slo[m]===null?'none':n(slo[m]))+'</td>').join('')+'</tr>'
              + '<tr><td>long simulation, req/s served</td><td colspan="3">'+n(C.simulated_saturation_rate_per_s)+'</td></tr></table>';

            const cols = [['TTFT p50, ms','median_ttft_ms'],['TTFT p99, ms','p99_ttft_ms'],['TPOT p50, ms','median_tpot_ms'],['output tokens/s','steady_output_throughput'],['waiting','mean_requests_waiting']];
            let t = '<table><tr><th>rate, req/s</th>'+cols.map(c=>'<th>'+c[0]+'<br>measured / simulated / predicted</th>').join('')+'</tr>';
            for(const r of rows){ t += '<tr><td>'+n(r.request_rate)+' ('+Math.round(100*r.fraction_of_predicted_saturation)+'%)'
                + (r.measured_valid?'':' <span title="'+esc(r.measured_invalid_reasons.join('; '))+'">(measured run invalid)</span>')+'</td>'
                + cols.map(c=>'<td>'+METHODS.map(([m])=>r[m][c[1]]===null&&m==='predicted'?'unstable':n(r[m][c[1]])).join(' / ')+'</td>').join('')+'</tr>'; }
            $('table').innerHTML = t+'</table>';
            $('notes').innerHTML = (C.notes.length? C.notes : ['All three agree within 10% at every rate below the knee.']).map(x=>'<li class="note">'+esc(x)+'</li>').join('');

            const T = DATA.timeline;
            if(T){
              $('timeline-words').textContent = 'The simulated run at '+n(T.request_rate)+' req/s, the sweep\\'s rate closest to the predicted knee, '
                + 'over its model time: sequences running in the batch, requests waiting for the engine, tokens in each step and the KV cache in use.';
              const at = k=>T.time_s.map((s,i)=>[s,T[k][i]]);
              draw('chart-timeline', {title:{text:'Engine state over time, one run near the knee',textStyle:{fontSize:14}},tooltip:{trigger:'axis'},legend:{top:24},grid:{top:64,right:80},
                xAxis:{type:'value',name:'model time, s',nameLocation:'middle',nameGap:26},
                yAxis:[{type:'value',name:'requests'},{type:'value',name:'tokens / KV %',position:'right'}],
                series:[{name:'running',type:'line',showSymbol:false,data:at('running')},{name:'waiting',type:'line',showSymbol:false,data:at('waiting')},
                        {name:'batch tokens',type:'line',showSymbol:false,yAxisIndex:1,data:at('batch_tokens')},
                        {name:'KV cache %',type:'line',showSymbol:false,yAxisIndex:1,data:T.time_s.map((s,i)=>[s,100*T.kv_cache_usage[i]])}]});
            } else { $('timeline-words').textContent = 'No run was simulated.'; }
            $('metadata').innerHTML = '<table>'+Object.entries(DATA.metadata).map(([k,v])=>'<tr><th>'+esc(k)+'</th><td>'+esc(typeof v==='object'?JSON.stringify(v):v)+'</td></tr>').join('')+'</table>';
            </script></body></html>
            """;
}
