// The run report's script (trace/report.cpp writes the page and its data): draws one row
// (<g class="gantt-row">) per worker of each rank and one <rect class="task"> per task,
// coloured by kind; the ready-task curves; the tile and partition maps. It reads the trace
// data from the JSON element 'trace-data'. trace/embed.cmake builds it into the library and
// leaves this opening comment out of the page; tests/report_dom.sh checks what it draws.
const data = JSON.parse(document.getElementById('trace-data').textContent);
const svgNS = 'http://www.w3.org/2000/svg';
const palette = ['#4a7fb5','#e69138','#6aa84f','#a64d79','#cc4125','#45818e','#bf9000','#674ea7'];
const kinds = data.kinds;
const colour = k => palette[kinds.indexOf(k) % palette.length];
const begin = Math.min(...data.ranks.map(r => r.begin_us));
const end = Math.max(begin + 1, ...data.ranks.map(r => r.end_us));
const label = 110, width = 1000, rowH = 24;
const rows = data.ranks.flatMap(r => r.workers.map(w => ({rank: r, worker: w})));
const svg = document.createElementNS(svgNS, 'svg');
svg.setAttribute('id', 'gantt');
svg.setAttribute('width', label + width + 10);
svg.setAttribute('height', rows.length * rowH + 24);
const tip = document.getElementById('tip');
rows.forEach((row, i) => {
  const g = document.createElementNS(svgNS, 'g');
  g.setAttribute('class', 'gantt-row');
  g.setAttribute('data-rank', row.rank.rank);
  g.setAttribute('data-worker', row.worker.id);
  g.setAttribute('transform', `translate(0,${i * rowH})`);
  const name = document.createElementNS(svgNS, 'text');
  name.setAttribute('y', rowH - 5);
  name.textContent = (data.ranks.length > 1 ? `r${row.rank.rank} ` : '') + row.worker.name;
  g.appendChild(name);
  const lane = document.createElementNS(svgNS, 'rect');
  lane.setAttribute('class', 'lane');
  lane.setAttribute('x', label); lane.setAttribute('width', width);
  lane.setAttribute('y', 1); lane.setAttribute('height', rowH - 2);
  g.appendChild(lane);
  // Binned (large runs): the worker's busy share of each bin, coloured by its main kind.
  const binW = width * (row.rank.end_us - row.rank.begin_us) / (end - begin) / 1000;
  const x0 = label + width * (row.rank.begin_us - begin) / (end - begin);
  for (const [b, k, share] of (row.rank.bins[row.worker.id] || [])) {
    const r = document.createElementNS(svgNS, 'rect');
    r.setAttribute('class', 'task-bin');
    r.setAttribute('x', x0 + b * binW); r.setAttribute('width', Math.max(0.5, binW));
    r.setAttribute('y', 2 + (rowH - 4) * (1 - share)); r.setAttribute('height', (rowH - 4) * share);
    r.setAttribute('fill', colour(kinds[k]));
    g.appendChild(r);
  }
  for (const t of row.rank.tasks) {
    if (t.worker !== row.worker.id) continue;
    const r = document.createElementNS(svgNS, 'rect');
    r.setAttribute('class', 'task');
    r.setAttribute('x', label + width * (t.start_us - begin) / (end - begin));
    r.setAttribute('width', Math.max(0.5, width * (t.end_us - t.start_us) / (end - begin)));
    r.setAttribute('y', 2); r.setAttribute('height', rowH - 4);
    r.setAttribute('fill', colour(t.kind));
    if (t.crit) {  // on the critical path: outlined
      r.setAttribute('data-critical', '1');
      r.setAttribute('stroke', '#000'); r.setAttribute('stroke-width', '1.5');
    }
    r.addEventListener('mousemove', e => {
      tip.style.display = 'block';
      tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
      tip.textContent = `${t.name}: ${(t.end_us - t.start_us).toFixed(1)} us`;
    });
    r.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
    g.appendChild(r);
  }
  svg.appendChild(g);
});
const axis = document.createElementNS(svgNS, 'text');
axis.setAttribute('x', label); axis.setAttribute('y', rows.length * rowH + 16);
axis.textContent = `${(begin / 1000).toFixed(2)} .. ${(end / 1000).toFixed(2)} ms`;
svg.appendChild(axis);
document.getElementById('gantt-box').appendChild(svg);
// The count of tasks ready but not started, per rank, on the Gantt chart's time axis.
for (const r of data.ranks) {
  if (!r.ready.length) continue;
  const h = 60, top = Math.max(1, ...r.ready);
  const c = document.createElementNS(svgNS, 'svg');
  c.setAttribute('class', 'ready-curve');
  c.setAttribute('data-rank', r.rank);
  c.setAttribute('width', label + width + 10); c.setAttribute('height', h + 4);
  const x0 = label + width * (r.begin_us - begin) / (end - begin);
  const w = width * (r.end_us - r.begin_us) / (end - begin);
  let d = `M${x0},${h}`;
  r.ready.forEach((v, k) => {
    d += ` L${x0 + w * k / r.ready.length},${h - h * v / top}` +
         ` L${x0 + w * (k + 1) / r.ready.length},${h - h * v / top}`;
  });
  const p = document.createElementNS(svgNS, 'path');
  p.setAttribute('d', d + ` L${x0 + w},${h} Z`);
  c.appendChild(p);
  const t = document.createElementNS(svgNS, 'text');
  t.setAttribute('y', 12);
  t.textContent = (data.ranks.length > 1 ? `r${r.rank} ` : '') + `ready: max ${top.toFixed(1)}`;
  c.appendChild(t);
  document.getElementById('ready-box').appendChild(c);
}
// Tile maps: one SVG per grid (2-D, 1-D) or per layer of tiles along z (3-D).
const cpuShades = ['#4a7fb5','#8fb3da','#2b5987','#6f96c4','#b7cde6','#1c3f63'];
const gpuShades = ['#6aa84f','#a4cf8f','#38761d','#88bf6e','#c9e3bc','#274e13'];
const workerColour = new Map(), seen = {cpu: 0, cuda: 0};
data.ranks.forEach((r, ri) => r.workers.forEach(w => {
  const gpu = w.arch !== 'cpu', shades = gpu ? gpuShades : cpuShades;
  workerColour.set(`${ri}/${w.id}`, {colour: shades[seen[gpu ? 'cuda' : 'cpu']++ % shades.length],
    name: (data.ranks.length > 1 ? `r${r.rank} ` : '') + w.name});
}));
if (data.tile_maps.length || data.partition_maps.length)
  document.getElementById('tile-legend').innerHTML =
  [...workerColour.values()].map(w => `<span style="color:${w.colour}">&#9632;</span> ${w.name}`)
    .join(' &nbsp; ');
for (const m of data.tile_maps) {
  const box = document.createElement('div');
  box.className = 'tile-map';
  const head = document.createElement('p');
  head.textContent = `${m.stencils.join(', ')}: ${m.extent.slice(0, m.dims).join(' x ')} points, ` +
    `${m.tiles.length} tiles`;
  box.appendChild(head);
  const layers = m.dims === 3 ? [...new Set(m.tiles.map(t => t[2]))].sort((a, b) => a - b) : [0];
  const ex = m.extent[0], ey = m.dims >= 2 ? m.extent[1] : 1;
  const side = m.dims === 3 ? 180 : 480, scale = side / Math.max(ex, m.dims >= 2 ? ey : 1);
  const height = m.dims >= 2 ? ey * scale : 40;
  let prevAt = new Map();
  for (const z of layers.slice(0, 24)) {
    const layer = m.tiles.map((t, i) => ({t, i})).filter(x => m.dims < 3 || x.t[2] === z);
    const at = new Map(layer.map(x => [`${x.t[0]},${x.t[1]}`, x.t]));
    const svg = document.createElementNS(svgNS, 'svg');
    svg.setAttribute('width', ex * scale + 4); svg.setAttribute('height', height + 18);
    svg.style.marginRight = '8px';
    const ys = t => m.dims >= 2 ? t[1] * scale : 0, hs = t => m.dims >= 2 ? t[4] * scale : 40;
    for (const {t, i} of layer) {
      const r = document.createElementNS(svgNS, 'rect');
      r.setAttribute('class', 'tile');
      r.setAttribute('x', 2 + t[0] * scale); r.setAttribute('y', 2 + ys(t));
      r.setAttribute('width', t[3] * scale); r.setAttribute('height', hs(t));
      const w = workerColour.get(`${t[7]}/${t[8]}`);
      r.setAttribute('fill', t[9] > 0 && w ? w.colour : '#ddd');
      r.setAttribute('stroke', '#fff'); r.setAttribute('stroke-width', '0.5');
      r.setAttribute('data-rank', t[6]);
      const title = document.createElementNS(svgNS, 'title');
      title.textContent = `tile ${i} at (${t.slice(0, m.dims).join(', ')}), rank ${t[6]}: ` +
        (t[9] > 0 ? `${t[9]} of its ${t[10]} tasks on ${w.name}` : 'no task recorded');
      r.appendChild(title);
      svg.appendChild(r);
    }
    // A thick line where a tile's right or lower neighbour belongs to another rank.
    for (const {t} of layer) {
      const sides = [[t[0] + t[3], t[1], 'x'], [t[0], t[1] + t[4], 'y']];
      for (const [nx, ny, axis] of sides) {
        const n = at.get(`${nx},${ny}`);
        if (!n || n[6] === t[6] || (axis === 'y' && m.dims < 2)) continue;
        const l = document.createElementNS(svgNS, 'line');
        l.setAttribute('class', 'rank-border');
        const x1 = 2 + nx * scale, y1 = 2 + (m.dims >= 2 ? ny * scale : 0);
        l.setAttribute('x1', x1); l.setAttribute('y1', y1);
        l.setAttribute('x2', axis === 'x' ? x1 : x1 + t[3] * scale);
        l.setAttribute('y2', axis === 'x' ? y1 + hs(t) : y1);
        l.setAttribute('stroke', '#000'); l.setAttribute('stroke-width', '3');
        svg.appendChild(l);
      }
    }
    // 3-D: a thick line at the left of a layer beside each tile whose tile in the previous
    // layer belongs to another rank (the border between ranks runs between the two layers).
    for (const {t} of layer) {
      const below = prevAt.get(`${t[0]},${t[1]}`);
      if (!below || below[6] === t[6]) continue;
      const l = document.createElementNS(svgNS, 'line');
      l.setAttribute('class', 'rank-border');
      l.setAttribute('x1', 1); l.setAttribute('x2', 1);
      l.setAttribute('y1', 2 + ys(t)); l.setAttribute('y2', 2 + ys(t) + hs(t));
      l.setAttribute('stroke', '#000'); l.setAttribute('stroke-width', '3');
      svg.appendChild(l);
    }
    prevAt = at;
    if (m.dims === 3) {
      const label = document.createElementNS(svgNS, 'text');
      label.setAttribute('x', 2); label.setAttribute('y', height + 15);
      label.setAttribute('font-size', '11');
      label.textContent = `z from ${z}, rank ${[...new Set(layer.map(x => x.t[6]))].join(',')}`;
      svg.appendChild(label);
    }
    box.appendChild(svg);
  }
  document.getElementById('tile-maps').appendChild(box);
}
// Partition maps of meshes: each element (polygon or dot) or raster cell coloured by the worker
// that ran most of its tile's tasks, rank borders as thick lines.
for (const m of data.partition_maps) {
  const box = document.createElement('div');
  box.className = 'partition-map';
  const head = document.createElement('p');
  head.textContent = `${m.set} (loops ${m.loops.join(', ')}): ${m.elements} elements in ` +
    `${m.tiles.length} tiles` + (m.raster ? `, drawn as cells of ${m.raster} px` : '');
  box.appendChild(head);
  const svg = document.createElementNS(svgNS, 'svg');
  svg.setAttribute('width', m.width + 4); svg.setAttribute('height', m.height + 4);
  const g = document.createElementNS(svgNS, 'g');
  g.setAttribute('transform', 'translate(2,2)');
  const about = t => {
    const [rank, ri, worker, most, all] = m.tiles[t], w = workerColour.get(`${ri}/${worker}`);
    return {rank, colour: most > 0 && w ? w.colour : '#ddd',
      text: `tile ${t}, rank ${rank}: ` + (most > 0 ? `${most} of its ${all} tasks on ${w.name}` :
        'no task recorded')};
  };
  for (const s of m.shapes) {
    const t = m.raster ? s[3] : s[0], a = about(t);
    let e;
    if (m.raster) {
      e = document.createElementNS(svgNS, 'rect');
      e.setAttribute('class', 'partition-cell');
      e.setAttribute('x', s[1] * m.raster); e.setAttribute('y', s[0] * m.raster);
      e.setAttribute('width', (s[2] - s[1] + 1) * m.raster); e.setAttribute('height', m.raster);
    } else if (s.length === 3) {
      e = document.createElementNS(svgNS, 'circle');
      e.setAttribute('class', 'partition-element');
      e.setAttribute('cx', s[1]); e.setAttribute('cy', s[2]); e.setAttribute('r', 2);
    } else {
      e = document.createElementNS(svgNS, 'polygon');
      e.setAttribute('class', 'partition-element');
      e.setAttribute('points', s.slice(1).join(' '));
      e.setAttribute('stroke', '#fff'); e.setAttribute('stroke-width', '0.3');
    }
    e.setAttribute('fill', a.colour);
    e.setAttribute('data-tile', t); e.setAttribute('data-rank', a.rank);
    const title = document.createElementNS(svgNS, 'title');
    title.textContent = a.text;
    e.appendChild(title);
    g.appendChild(e);
  }
  // Thin lines between tiles, thick ones (drawn last) between ranks.
  for (const [x1, y1, x2, y2, ranks] of [...m.borders].sort((a, b) => a[4] - b[4])) {
    const l = document.createElementNS(svgNS, 'line');
    l.setAttribute('class', ranks ? 'rank-border' : 'tile-border');
    l.setAttribute('x1', x1); l.setAttribute('y1', y1); l.setAttribute('x2', x2); l.setAttribute('y2', y2);
    l.setAttribute('stroke', '#000'); l.setAttribute('stroke-width', ranks ? '2.5' : '0.8');
    l.setAttribute('stroke-linecap', 'round');
    g.appendChild(l);
  }
  svg.appendChild(g);
  box.appendChild(svg);
  document.getElementById('tile-maps').appendChild(box);
}
document.getElementById('legend').innerHTML = kinds.map(k =>
  `<span style="color:${colour(k)}">&#9632;</span> ${k}`).join(' &nbsp; ');
