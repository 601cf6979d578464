declare module "cytoscape-dagre" {
  const ext: any;
  export default ext;
}
