package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * What a reader sees of a page's charts, checked in the browser that drew them: no two text labels of a chart overlap,
 * no label runs out of its chart, every line or scatter series has a point inside its plot, every vertical or
 * horizontal marker line (a knee, an objective) lies inside its plot, no data point sits on a label inside the plot
 * (a marker's words), every shown axis is named in words with its unit ("offered rate, req/s", not "request_rate" or
 * "ms"), and no table heading (a result's key) wraps in the middle of a word. Boxes come from the browser's own layout
 * ({@code getBoundingClientRect} of each SVG text, of each character of a heading); series and markers from ECharts'
 * coordinate conversion. Shared by every page test: the dashboard's here, the HTML reports' and the demo page's through
 * this module's test jar.
 */
public final class PageLayout {
    /** Defines {@code infersimLayoutProblems(window)}, which returns the problems as an array of strings. */
    public static final String SCRIPT = """
            function infersimLayoutProblems(win){
              const doc = win.document, out = [];
              const shown = el => { for(let e=el; e && e.nodeType===1; e=e.parentNode){ const cs=win.getComputedStyle(e);
                  if(cs.display==='none'||cs.visibility==='hidden'||parseFloat(cs.opacity)===0) return false; } return true; };
              const clear = el => ['opacity','fill-opacity'].every(a => el.getAttribute(a)===null || parseFloat(el.getAttribute(a))>0);
              for(const svg of doc.querySelectorAll('svg')){
                const box = svg.getBoundingClientRect();
                if(box.width<10 || box.height<10) continue;
                const texts = Array.from(svg.querySelectorAll('text')).filter(t=>t.textContent.trim() && shown(t) && clear(t));
                const titleText = texts.find(t=>/bold/.test(t.getAttribute('style')||''));
                const title = titleText ? titleText.textContent.trim() : '(untitled chart)';
                const boxes = texts.map(t=>[t.textContent.trim(), t.getBoundingClientRect()]);
                for(const [s, r] of boxes){
                  if(r.left<box.left-0.5 || r.right>box.right+0.5 || r.top<box.top-0.5 || r.bottom>box.bottom+0.5)
                    out.push('"'+title+'": label "'+s+'" is clipped');
                }
                for(let i=0;i<boxes.length;i++) for(let j=i+1;j<boxes.length;j++){
                  const a=boxes[i][1], b=boxes[j][1];
                  const w=Math.min(a.right,b.right)-Math.max(a.left,b.left), h=Math.min(a.bottom,b.bottom)-Math.max(a.top,b.top);
                  if(w>1 && h>1) out.push('"'+title+'": label "'+boxes[i][0]+'" overlaps "'+boxes[j][0]+'"');
                }
              }
              // A heading wraps mid-word where a line ends between two letters or digits of one text (a key may wrap
              // after "_", where a <wbr> lets it; a <br> ends a text).
              for(const th of doc.querySelectorAll('th')){
                if(!shown(th)) continue;
                const walker = doc.createTreeWalker(th, 4);
                for(let t=walker.nextNode(); t; t=walker.nextNode()){
                  let before = null;
                  for(let i=0;i<t.data.length;i++){
                    // a space is where a line may end (at a line's end it takes no width, so it has no box to compare)
                    if(/\\s/.test(t.data[i])){ if(before) before = [' ', before[1]]; continue; }
                    const r = doc.createRange(); r.setStart(t,i); r.setEnd(t,i+1); const rect=r.getClientRects()[0];
                    if(!rect || rect.width===0) continue;
                    if(before && rect.top>before[1]+2 && /[A-Za-z0-9]/.test(before[0]) && /[A-Za-z0-9]/.test(t.data[i]))
                      out.push('heading "'+th.textContent.trim()+'" wraps mid-word, before "'+t.data.slice(i)+'"');
                    before = [t.data[i], rect.top];
                  }
                }
              }
              if(!win.echarts) return out;
              // An axis is named in words with its unit: no raw key, a word of three letters or more, and a unit.
              const UNIT = /(^|[\\s,(:])(ms|s|%|req\\/s|tokens?\\/s|tokens?|token gaps|requests?|sequences|replicas|clients|blocks|GiB|share \\(0-1\\))([\\s,)]|$)/;
              for(const el of doc.querySelectorAll('[_echarts_instance_]')){
                const c = win.echarts.getInstanceByDom(el);
                if(!c || !shown(el)) continue;
                const o = c.getOption();
                if(!o) continue; // a chart with nothing set yet draws nothing
                const title = (o.title && o.title[0] && o.title[0].text) || '(untitled chart)';
                const selected = name => !(o.legend||[]).some(l => l.selected && l.selected[name]===false);
                for(const kind of ['xAxis','yAxis']) (o[kind]||[]).forEach(a => { if(a.show===false) return;
                  const nm = (a.name||'').trim();
                  if(!nm || /_/.test(nm) || !/[A-Za-z]{3}/.test(nm) || !UNIT.test(nm))
                    out.push('"'+title+'": axis "'+nm+'" is not named in words with its unit'); });
                // A data point on a label inside the plot hides the label's words.
                const grid0 = c.getModel().getComponent('grid', 0);
                if(grid0 && grid0.coordinateSystem){
                  const gr = grid0.coordinateSystem.getRect(), box = el.getBoundingClientRect();
                  const inside = Array.from(el.querySelectorAll('text')).filter(t=>t.textContent.trim() && shown(t) && clear(t))
                    .map(t=>[t.textContent.trim(), t.getBoundingClientRect()]).filter(([, r]) => r.left>=box.left+gr.x-0.5
                      && r.right<=box.left+gr.x+gr.width+0.5 && r.top>=box.top+gr.y-0.5 && r.bottom<=box.top+gr.y+gr.height+0.5);
                  (o.series||[]).forEach((s, i) => {
                    if(!inside.length || !(s.type==='scatter' || (s.type==='line' && s.showSymbol!==false && s.symbol!=='none'))
                        || !s.data || !selected(s.name)) return;
                    const radius = (typeof s.symbolSize==='number' ? s.symbolSize : 4) / 2;
                    for(const d of s.data){ const p = Array.isArray(d) ? d : d && Array.isArray(d.value) ? d.value : null;
                      if(!p || typeof p[1]!=='number' || !isFinite(p[1])) continue;
                      const px = c.convertToPixel({seriesIndex:i}, p); if(!px) continue;
                      const x = box.left+px[0], y = box.top+px[1];
                      for(const [words, r] of inside) if(x+radius>r.left && x-radius<r.right && y+radius>r.top && y-radius<r.bottom)
                        out.push('"'+title+'": a point of "'+s.name+'" covers the label "'+words+'"'); }
                  });
                }
                (o.series||[]).forEach((s, i) => {
                  if((s.type==='line'||s.type==='scatter') && s.data && s.data.length && selected(s.name)){
                    const pts = s.data.map((d, k) => typeof d==='number' ? [k, d] : Array.isArray(d) ? d : d && Array.isArray(d.value) ? d.value : null)
                      .filter(p => p && typeof p[1]==='number' && isFinite(p[1]));
                    if(pts.length && !pts.some(p => { const px=c.convertToPixel({seriesIndex:i}, p); return px && c.containPixel({seriesIndex:i}, px); }))
                      out.push('"'+title+'": series "'+s.name+'" has no point inside the plot');
                  }
                  for(const m of ((s.markLine && s.markLine.data) || [])){
                    const grid = c.getModel().getComponent('grid', s.gridIndex||0);
                    if(!grid || !m) continue;
                    const rect = grid.coordinateSystem.getRect();
                    if(typeof m.xAxis==='number'){ const x=c.convertToPixel({xAxisIndex:s.xAxisIndex||0}, m.xAxis);
                      if(!(x>=rect.x-0.5 && x<=rect.x+rect.width+0.5)) out.push('"'+title+'": marker of "'+s.name+'" at x = '+m.xAxis+' lies outside the plot'); }
                    if(typeof m.yAxis==='number'){ const y=c.convertToPixel({yAxisIndex:s.yAxisIndex||0}, m.yAxis);
                      if(!(y>=rect.y-0.5 && y<=rect.y+rect.height+0.5)) out.push('"'+title+'": marker of "'+s.name+'" at y = '+m.yAxis+' lies outside the plot'); }
                  }
                });
              }
              return out;
            }
            """;

    private PageLayout() {
    }

    /** The problems on the page the browser shows now. */
    public static List<String> problems(HeadlessBrowser browser) {
        JsonNode found = browser.eval("(function(){" + SCRIPT + "; return infersimLayoutProblems(window);})()");
        List<String> out = new ArrayList<>();
        found.forEach(p -> out.add(p.asText()));
        return out;
    }
}
