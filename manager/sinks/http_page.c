/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_page.c - the live page: its style and script, and the
 * run's state rendered into its HTML on the server (escaped), the same
 * elements the script then fills from each /events snapshot. It fits a
 * phone's 390 px: no fixed width above that, tables scroll in their box,
 * the least needed columns go below 480 px. */
#include "manager/sinks/http_page.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/text.h"

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<link rel=\"icon\" href=\"data:,\">\n"
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
    "<style>\n"
    "body{font:14px system-ui,sans-serif;margin:1em;color:#222;max-width:64em}\n"
    "h1{font-size:1.3em;margin:0 0 .4em;overflow-wrap:anywhere}\n"
    "h2{font-size:1.1em;margin:1.2em 0 0}\n"
    "#bar{height:14px;background:#eee;border-radius:3px;overflow:hidden;max-width:40em}\n"
    "#barfill{height:100%;background:#3a7}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;margin-top:.5em}\n"
    "td,th{padding:3px 8px;text-align:right;border-bottom:1px solid #ddd;white-space:nowrap}\n"
    "td:first-child,th:first-child{text-align:left}\n"
    "td.name{white-space:normal;overflow-wrap:anywhere;text-align:left}\n"
    "th.l{text-align:left}\n"
    "td.barc{width:6em;min-width:6em;text-align:left}\n"
    ".iops{display:inline-block;height:10px;background:#47c;vertical-align:middle}\n"
    "tr.down td,tr.bad td{color:#b00}\n"
    "tr.all td{font-weight:bold}\n"
    ".muted{color:#777}\n"
    "@media (max-width:480px){body{margin:.5em;font-size:13px}td,th{padding:2px 4px}"
    ".wide{display:none}}\n"
    "</style>\n";

/* The page's one script, between its <script> tags: the CSP names its hash. */
static const char page_js[] =
    "\n'use strict';\n"
    "function $(id){return document.getElementById(id);}\n"
    "function fmt(v,d){return v===null||v===undefined?'-':v.toFixed(d);}\n"
    "function dur(s){if(s===null||s===undefined)return '-';s=Math.max(0,Math.round(s));"
    "var h=Math.floor(s/3600),m=Math.floor(s%3600/60),x=s%60;"
    "return (h?h+'h ':'')+(h||m?m+'m ':'')+x+'s';}\n"
    "function cell(tr,text,cls){var td=document.createElement('td');td.textContent=text;"
    "if(cls)td.className=cls;tr.appendChild(td);return td;}\n"
    "function show(r){\n"
    " document.title='iofleet live: '+r.plan;\n"
    " $('plan').textContent=r.plan;\n"
    " $('state').textContent=r.state_text;\n"
    " $('test').textContent=r.test?r.test.index+'/'+r.tests:'-';\n"
    " $('spec').textContent=r.test?r.test.spec+(r.test.cycle?' ['+r.test.cycle+']':''):'';\n"
    " $('phase').textContent=r.test?r.test.phase:'';\n"
    " $('interval').textContent=r.intervals;\n"
    " $('progress').textContent=r.progress===null?'-':(100*r.progress).toFixed(1)+'%';\n"
    " $('eta').textContent=dur(r.eta_s);\n"
    " $('elapsed').textContent=dur(r.elapsed_s);\n"
    " $('barfill').style.width=(r.progress===null?0:100*r.progress).toFixed(1)+'%';\n"
    " $('figures').textContent=r.figures;\n"
    " var rows=[r.all].concat(r.nodes),max=0,tb=$('nodes');\n"
    " rows.forEach(function(n){if(n.iops>max)max=n.iops;});\n"
    " tb.textContent='';\n"
    " rows.forEach(function(n,i){var tr=document.createElement('tr');\n"
    "  tr.className=i===0?'all':(n.up?'':'down');\n"
    "  cell(tr,n.name,'name');cell(tr,i===0?'':(n.lost?'LOST':(n.up?'up':'no report')));\n"
    "  cell(tr,fmt(n.iops,1));\n"
    "  var b=document.createElement('span');b.className='iops';"
    "b.style.width=(max>0?Math.round(100*(n.iops||0)/max):0)+'%';"
    "cell(tr,'','barc wide').appendChild(b);\n"
    "  cell(tr,fmt(n.mibps,2));cell(tr,fmt(n.avg_ms,3));cell(tr,fmt(n.p99_ms,3));"
    "cell(tr,fmt(n.max_ms,3),'wide');cell(tr,String(n.errors),'wide');tb.appendChild(tr);});\n"
    " var d=$('done');d.textContent='';\n"
    " r.finished.forEach(function(t){var tr=document.createElement('tr');\n"
    "  tr.className=t.status==='ok'?'':'bad';\n"
    "  cell(tr,String(t.index));cell(tr,t.spec+(t.cycle?' ['+t.cycle+']':''),'name');"
    "cell(tr,t.status);cell(tr,fmt(t.iops,1));cell(tr,fmt(t.mibps,2),'wide');"
    "cell(tr,fmt(t.avg_ms,3));"
    "cell(tr,fmt(t.p99_ms,3));d.appendChild(tr);});\n"
    " if(!r.finished.length){var tr=document.createElement('tr');"
    "cell(tr,'none yet','muted').colSpan=7;d.appendChild(tr);}\n"
    " $('more').textContent=r.finished_total>r.finished.length?"
    "(r.finished_total-r.finished.length)+' earlier tests not shown':'';\n"
    "}\n"
    /* A refused stream (503: every stream slot taken) is not retried by the
     * browser itself: the page opens a new one after 5 s. */
    "function listen(){var es=new EventSource('events');\n"
    "es.addEventListener('run',function(e){$('conn').textContent='';show(JSON.parse(e.data));});\n"
    "es.onerror=function(){$('conn').textContent='disconnected; retrying';"
    "if(es.readyState===2)setTimeout(listen,5000);};}\n"
    "listen();\n";

static char page_csp[256];
static pthread_once_t page_csp_once = PTHREAD_ONCE_INIT;

/* script-src is the SHA-256 of page_js alone (a CSP hash source): no other
 * inline script or event handler runs, should a name ever slip through the
 * escaping. Without a digest, no script at all: the first HTML still shows
 * the run. */
static void page_csp_init(void)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1] = "";
    unsigned int n = 0;

    if (EVP_Digest(page_js, sizeof(page_js) - 1, md, &n, EVP_sha256(), NULL))
        EVP_EncodeBlock((unsigned char *)b64, md, (int)n);
    snprintf(page_csp, sizeof(page_csp),
             "default-src 'none'; script-src %s%s%s; style-src 'unsafe-inline'; "
             "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'",
             b64[0] ? "'sha256-" : "'none'", b64, b64[0] ? "'" : "");
}

const char *mgr_http_page_csp(void)
{
    pthread_once(&page_csp_once, page_csp_init);
    return page_csp;
}

/* s as HTML text: what common/text.h refuses (controls, bidirectional
 * overrides) shown as its escape, then & < > " ' as entities. */
static void page_text(struct iof_buf *b, const char *s)
{
    iof_text_add_html(b, s);
}

/* A figure as the script's fmt() writes it: "-" when unknown. */
static void page_num(struct iof_buf *b, bool known, double v, int prec)
{
    if (known && isfinite(v))
        iof_buf_printf(b, "%.*f", prec, v);
    else
        iof_buf_addc(b, '-');
}

/* Seconds as the script's dur() writes them: "1h 2m 3s", "-" unknown. */
static void page_dur(struct iof_buf *b, double s)
{
    unsigned long x, h, m;

    if (s < 0 || !isfinite(s)) {
        iof_buf_addc(b, '-');
        return;
    }
    x = (unsigned long)(s + 0.5);
    h = x / 3600;
    m = x % 3600 / 60;
    if (h)
        iof_buf_printf(b, "%luh ", h);
    if (h || m)
        iof_buf_printf(b, "%lum ", m);
    iof_buf_printf(b, "%lus", x % 60);
}

/* <td[ class="cls"]>; the caller writes the text and </td>. */
static void page_td(struct iof_buf *b, const char *cls)
{
    if (cls)
        iof_buf_printf(b, "<td class=\"%s\">", cls);
    else
        iof_buf_addstr(b, "<td>");
}

/* One row of the nodes' table (ALL first), as the script builds it. */
static void page_node(struct iof_buf *b, const struct mgr_view_node *n, bool all, double max)
{
    const struct mgr_metrics *m = &n->m;
    double pct = max > 0 && n->have && m->rates ? 100 * m->iops / max : 0;

    iof_buf_printf(b, "<tr class=\"%s\">", all ? "all" : n->up ? "" : "down");
    page_td(b, "name");
    page_text(b, n->name);
    iof_buf_printf(b, "</td><td>%s</td><td>",
                   all       ? ""
                   : n->lost ? "LOST"
                   : n->up   ? "up"
                             : "no report");
    page_num(b, n->have && m->rates, m->iops, 1);
    iof_buf_printf(b,
                   "</td><td class=\"barc wide\"><span class=\"iops\" style=\"width:%.0f%%\">"
                   "</span></td><td>",
                   pct);
    page_num(b, n->have && m->rates, m->mibps, 2);
    iof_buf_addstr(b, "</td><td>");
    page_num(b, n->have, m->avg_ms, 3);
    iof_buf_addstr(b, "</td><td>");
    page_num(b, n->have && m->percentiles, m->p99_ms, 3);
    iof_buf_addstr(b, "</td><td class=\"wide\">");
    page_num(b, n->have, m->max_ms, 3);
    iof_buf_printf(b, "</td><td class=\"wide\">%llu</td></tr>", (unsigned long long)n->errors);
}

/* One row of the tests that ended. */
static void page_done(struct iof_buf *b, const struct mgr_view_test *t)
{
    const struct mgr_metrics *m = &t->all;

    iof_buf_printf(b, "<tr class=\"%s\"><td>%zu</td>", t->status == MGR_TEST_OK ? "" : "bad",
                   t->index);
    page_td(b, "name");
    page_text(b, t->spec);
    if (t->cycle[0]) {
        iof_buf_addstr(b, " [");
        page_text(b, t->cycle);
        iof_buf_addc(b, ']');
    }
    iof_buf_printf(b, "</td><td>%s</td><td>", mgr_test_status_name(t->status));
    page_num(b, m->rates, m->iops, 1);
    iof_buf_addstr(b, "</td><td class=\"wide\">");
    page_num(b, m->rates, m->mibps, 2);
    iof_buf_addstr(b, "</td><td>");
    page_num(b, true, m->avg_ms, 3);
    iof_buf_addstr(b, "</td><td>");
    page_num(b, m->percentiles, m->p99_ms, 3);
    iof_buf_addstr(b, "</td></tr>");
}

void mgr_http_page(const struct mgr_view *v, uint64_t now, struct iof_buf *b)
{
    struct mgr_view_now st;
    struct mgr_view_node all;
    double max = 0;
    size_t first = mgr_view_done_first(v);

    mgr_view_state(v, now, &st);
    mgr_view_all(v, &all);
    iof_buf_addstr(b, page_head);
    iof_buf_addstr(b, "<title>iofleet live: ");
    page_text(b, v->plan);
    iof_buf_addstr(b, "</title></head><body>\n<h1>iofleet <span id=\"plan\">");
    page_text(b, v->plan);
    iof_buf_addstr(b, "</span></h1>\n<div><span id=\"state\">");
    page_text(b, st.state_text);
    iof_buf_addstr(b, "</span> &middot; test <span id=\"test\">");
    if (v->started)
        iof_buf_printf(b, "%zu/%zu", v->cur + 1, v->ntests);
    else
        iof_buf_addc(b, '-');
    iof_buf_addstr(b, "</span> <span id=\"spec\">");
    if (v->started) {
        page_text(b, v->spec);
        if (v->cycle[0]) {
            iof_buf_addstr(b, " [");
            page_text(b, v->cycle);
            iof_buf_addc(b, ']');
        }
    }
    iof_buf_printf(b,
                   "</span> <span id=\"phase\" class=\"muted\">%s</span> &middot; interval "
                   "<span id=\"interval\">%llu</span></div>\n<div>progress <span "
                   "id=\"progress\">",
                   v->started ? st.phase : "", (unsigned long long)v->published);
    if (st.progress >= 0)
        iof_buf_printf(b, "%.1f%%", 100 * st.progress);
    else
        iof_buf_addc(b, '-');
    iof_buf_addstr(b, "</span> &middot; ETA <span id=\"eta\">");
    page_dur(b, st.eta_s);
    iof_buf_addstr(b, "</span> &middot; elapsed <span id=\"elapsed\">");
    page_dur(b, st.elapsed_s);
    iof_buf_printf(b,
                   "</span></div>\n<div id=\"bar\"><div id=\"barfill\" style=\"width:%.1f%%\">"
                   "</div></div>\n<p class=\"muted\" id=\"figures\">",
                   st.progress >= 0 ? 100 * st.progress : 0);
    page_text(b, st.figures);
    iof_buf_addstr(b, "</p>\n<div class=\"scroll\"><table><thead><tr><th>node</th><th>status"
                      "</th><th>IOPS</th><th class=\"wide\"></th><th>MiB/s</th><th>avg ms</th>"
                      "<th>p99 ms</th><th class=\"wide\">max ms</th><th class=\"wide\">errors"
                      "</th></tr></thead><tbody id=\"nodes\">");
    if (all.have && all.m.rates)
        max = all.m.iops;
    for (size_t i = 0; i < v->nnodes; i++)
        if (v->nodes[i].have && v->nodes[i].m.rates && v->nodes[i].m.iops > max)
            max = v->nodes[i].m.iops;
    page_node(b, &all, true, max);
    for (size_t i = 0; i < v->nnodes; i++)
        page_node(b, &v->nodes[i], false, max);
    iof_buf_addstr(b,
                   "</tbody></table></div>\n<h2>Tests</h2>\n<div class=\"scroll\"><table>"
                   "<thead><tr><th>test</th><th class=\"l\">spec</th><th>status</th><th>IOPS</th>"
                   "<th class=\"wide\">MiB/s</th><th>avg ms</th><th>p99 ms</th></tr></thead><tbody "
                   "id=\"done\">");
    for (size_t i = first; i < v->ndone; i++)
        page_done(b, &v->done[i]);
    if (v->ndone == 0)
        iof_buf_addstr(b, "<tr><td class=\"muted\" colspan=\"7\">none yet</td></tr>");
    iof_buf_addstr(b, "</tbody></table></div>\n<p class=\"muted\" id=\"more\">");
    if (first)
        iof_buf_printf(b, "%zu earlier tests not shown", first);
    iof_buf_addstr(b, "</p>\n<p class=\"muted\" id=\"conn\"></p>\n");
    iof_buf_addstr(b, "<script>");
    iof_buf_addstr(b, page_js);
    iof_buf_addstr(b, "</script></body></html>\n");
}
