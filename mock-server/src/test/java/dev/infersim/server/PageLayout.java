package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * What a reader sees of a page's charts, checked in the browser that drew them: no two text labels of a chart overlap,
 * no label runs out of its chart, every line or scatter series has a point inside its plot, and every vertical or
 * horizontal marker line (a knee, an objective) lies inside its plot. Boxes come from the browser's own layout
 * ({@code getBoundingClientRect} of each SVG text); series and markers from ECharts' coordinate conversion. Shared by
 * every page test: the dashboard's here, the HTML reports' and the demo page's through this module's test jar.
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
              if(!win.echarts) return out;
              for(const el of doc.querySelectorAll('[_echarts_instance_]')){
                const c = win.echarts.getInstanceByDom(el);
                if(!c || !shown(el)) continue;
                const o = c.getOption();
                if(!o) continue; // a chart with nothing set yet draws nothing
                const title = (o.title && o.title[0] && o.title[0].text) || '(untitled chart)';
                const selected = name => !(o.legend||[]).some(l => l.selected && l.selected[name]===false);
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
